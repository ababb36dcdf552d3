package skyjo.bot.bench;

import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.CountDownLatch;
import skyjo.v1.BotServiceGrpc;
import skyjo.v1.DecisionReply;
import skyjo.v1.Hello;
import skyjo.v1.PlayRequest;
import skyjo.v1.PlayResponse;

/**
 * benchmarks/bench_sdk_java.py's baseline: the least a grpc-java bot does, on the generated stubs alone. It answers
 * every decision with legal action 0 on gRPC's own thread, the moment the request arrives (no View, no thread hop).
 * Only a Unix socket address (what the benchmark gives it).
 */
public final class BareClient {
    private BareClient() {}

    public static void main(String[] args) throws Exception {
        String path = System.getenv("SKYJO_ADDR").substring("unix:".length());
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        ManagedChannel channel = NettyChannelBuilder
                .forAddress(new DomainSocketAddress(path), InsecureChannelCredentials.create())
                .channelType(EpollDomainSocketChannel.class)
                .eventLoopGroup(group)
                .directExecutor()
                .build();
        Metadata headers = new Metadata();
        headers.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER),
                "Bearer " + System.getenv("SKYJO_TOKEN"));
        CountDownLatch done = new CountDownLatch(1);
        StreamObserver<PlayRequest>[] out = new StreamObserver[1];
        out[0] = BotServiceGrpc.newStub(channel).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers))
                .play(new StreamObserver<PlayResponse>() {
                    @Override
                    public void onNext(PlayResponse msg) {
                        if (msg.hasDecision()) {
                            out[0].onNext(PlayRequest.newBuilder().setReply(DecisionReply.newBuilder()
                                    .setRequestId(msg.getDecision().getRequestId()).setIndex(0)).build());
                        }
                    }

                    @Override
                    public void onError(Throwable t) {
                        done.countDown();
                    }

                    @Override
                    public void onCompleted() {
                        done.countDown();
                    }
                });
        out[0].onNext(PlayRequest.newBuilder().setHello(Hello.newBuilder().setName("bare").setProtocolVersion(1))
                .build());
        done.await();
        channel.shutdownNow();
        group.shutdownGracefully();
    }
}
