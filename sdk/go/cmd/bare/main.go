// Command bare is a bot on the raw stubs and grpc-go alone, without the SDK's client: Hello, then the index
// of the first legal action for every decision, until the stream ends. benchmarks/bench_sdk_go.py measures
// the SDK's round trip against it; it does nothing else a bot must (no reconnect, no signals, no TLS).
//
//	SKYJO_ADDR=127.0.0.1:50051 SKYJO_TOKEN=... bare
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	pb "skyjo-ref/skyjo/skyjov1"
)

func main() {
	conn, err := grpc.NewClient(os.Getenv("SKYJO_ADDR"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(2)
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+os.Getenv("SKYJO_TOKEN"))
	stream, err := pb.NewBotServiceClient(conn).Play(ctx)
	if err == nil {
		hello := &pb.Hello{Name: "bare", ProtocolVersion: 1}
		err = stream.Send(&pb.PlayRequest{Message: &pb.PlayRequest_Hello{Hello: hello}})
	}
	for err == nil {
		var msg *pb.PlayResponse
		if msg, err = stream.Recv(); err != nil {
			break
		}
		switch m := msg.Message.(type) {
		case *pb.PlayResponse_Welcome:
			fmt.Fprintf(os.Stderr, "connected to %s as '%s'\n", os.Getenv("SKYJO_ADDR"), m.Welcome.GetSeatName())
		case *pb.PlayResponse_Decision:
			reply := &pb.DecisionReply{RequestId: m.Decision.GetRequestId(), Choice: &pb.DecisionReply_Index{Index: 0}}
			err = stream.Send(&pb.PlayRequest{Message: &pb.PlayRequest_Reply{Reply: reply}})
		}
	}
	if err != io.EOF {
		fmt.Fprintln(os.Stderr, "stream ended:", err)
	}
}
