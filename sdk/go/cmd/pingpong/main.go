// Command pingpong is a bare grpc-go BotService for benchmarks/bench_sdk_go.py: it serves on 127.0.0.1:0
// (its address is its first line of output), and to the first bot that connects sends a recorded GameStart,
// then the same recorded DecisionRequest -n times, each after the bot's reply to the one before. It prints
// the round trips' median and quartiles in microseconds (send -> reply read) and exits.
//
//	pingpong -n 2000 -start START_B64 -request REQUEST_B64
package main

import (
	"encoding/base64"
	"flag"
	"fmt"
	"net"
	"os"
	"slices"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	pb "skyjo-ref/skyjo/skyjov1"
)

type server struct {
	pb.UnimplementedBotServiceServer
	start, request *pb.PlayResponse
	n              int
	done           chan []time.Duration
}

func (s *server) Play(stream pb.BotService_PlayServer) error {
	if _, err := stream.Recv(); err != nil { // Hello
		return err
	}
	welcome := &pb.PlayResponse{Message: &pb.PlayResponse_Welcome{Welcome: &pb.Welcome{ProtocolVersion: 1, SeatName: "bench"}}}
	if err := stream.Send(welcome); err != nil {
		return err
	}
	if err := stream.Send(s.start); err != nil {
		return err
	}
	trips := make([]time.Duration, 0, s.n)
	for i := range s.n {
		request := proto.Clone(s.request).(*pb.PlayResponse)
		request.GetDecision().RequestId = uint64(i + 1) // a new decision each time: the SDK decides every one
		began := time.Now()
		if err := stream.Send(request); err != nil {
			return err
		}
		reply, err := stream.Recv()
		if err != nil {
			return err
		}
		trips = append(trips, time.Since(began))
		if reply.GetReply().GetRequestId() != uint64(i+1) {
			return fmt.Errorf("reply to %d answers %d", i+1, reply.GetReply().GetRequestId())
		}
	}
	s.done <- trips
	return nil
}

func message(text string) *pb.PlayResponse {
	data, err := base64.StdEncoding.DecodeString(text)
	msg := &pb.PlayResponse{}
	if err == nil {
		err = proto.Unmarshal(data, msg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error: not a base64 PlayResponse:", err)
		os.Exit(2)
	}
	return msg
}

func main() {
	n := flag.Int("n", 2000, "round trips")
	start := flag.String("start", "", "base64 of a PlayResponse holding a game_start")
	request := flag.String("request", "", "base64 of a PlayResponse holding a decision")
	flag.Parse()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	s := &server{start: message(*start), request: message(*request), n: *n, done: make(chan []time.Duration, 1)}
	grpcServer := grpc.NewServer()
	pb.RegisterBotServiceServer(grpcServer, s)
	go grpcServer.Serve(listener)
	fmt.Println(listener.Addr().String())
	trips := <-s.done
	grpcServer.GracefulStop()
	slices.Sort(trips)
	micros := func(q float64) float64 { return float64(trips[int(q*float64(len(trips)-1))].Nanoseconds()) / 1e3 }
	fmt.Printf("%.1f %.1f %.1f\n", micros(0.5), micros(0.25), micros(0.75))
}
