package skyjo.bot;

import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import skyjo.v1.BotServiceGrpc;
import skyjo.v1.PlayRequest;
import skyjo.v1.PlayResponse;

/**
 * A scripted referee for the client tests: a real gRPC server on a Unix socket (the way leagues seat bots) or on
 * loopback TCP. Each Play stream runs the next {@link Script} in its own thread.
 */
final class FakeReferee implements AutoCloseable {
    /** One stream's referee side: read the bot's messages from {@code in}, answer on {@code out}. */
    interface Script {
        void play(Stream stream) throws Exception;
    }

    /** One Play stream as the referee sees it. */
    static final class Stream {
        final String authorization;
        final BlockingQueue<Object> in = new LinkedBlockingQueue<>();
        final StreamObserver<PlayResponse> out;

        Stream(String authorization, StreamObserver<PlayResponse> out) {
            this.authorization = authorization;
            this.out = out;
        }

        /** The bot's next message, or fails the test after 20 s (a client that said nothing). */
        PlayRequest next() throws InterruptedException {
            Object item = in.poll(20, TimeUnit.SECONDS);
            if (item instanceof PlayRequest request) {
                return request;
            }
            throw new AssertionError("expected a message from the bot, got " + item);
        }

        /** Reads Hello and answers Welcome; returns the Hello. */
        skyjo.v1.Hello welcome(String seatName) throws InterruptedException {
            PlayRequest hello = next();
            if (!hello.hasHello()) {
                throw new AssertionError("the first message was not Hello: " + hello);
            }
            send(PlayResponse.newBuilder().setWelcome(skyjo.v1.Welcome.newBuilder().setProtocolVersion(1)
                    .setSeatName(seatName)).build());
            return hello.getHello();
        }

        synchronized void send(PlayResponse msg) {
            out.onNext(msg);
        }
    }

    private static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

    final BlockingQueue<Script> scripts = new LinkedBlockingQueue<>();
    final BlockingQueue<Stream> streams = new LinkedBlockingQueue<>();
    private final Server server;
    private final EventLoopGroup group;
    final String address;

    private FakeReferee(Path socket) throws IOException {
        NettyServerBuilder builder;
        if (socket != null) {
            group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
            builder = NettyServerBuilder.forAddress(new DomainSocketAddress(socket.toString()))
                    .channelType(EpollServerDomainSocketChannel.class)
                    .bossEventLoopGroup(group)
                    .workerEventLoopGroup(group);
        } else {
            group = null;
            builder = NettyServerBuilder.forAddress(new java.net.InetSocketAddress("127.0.0.1", 0));
        }
        server = builder.addService(ServerInterceptors.intercept(new Service(), new Headers())).build().start();
        address = socket != null ? "unix:" + socket : "127.0.0.1:" + server.getPort();
    }

    static FakeReferee unix(Path socket) throws IOException {
        return new FakeReferee(socket);
    }

    static FakeReferee tcp() throws IOException {
        return new FakeReferee(null);
    }

    private static final io.grpc.Context.Key<String> AUTH = io.grpc.Context.key("authorization");

    /** Hands the authorization header to the service through the call's context. */
    private static final class Headers implements ServerInterceptor {
        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                ServerCallHandler<Q, R> next) {
            String auth = headers.get(AUTHORIZATION);
            return io.grpc.Contexts.interceptCall(io.grpc.Context.current().withValue(AUTH, auth == null ? "" : auth),
                    call, headers, next);
        }
    }

    private final class Service extends BotServiceGrpc.BotServiceImplBase {
        @Override
        public StreamObserver<PlayRequest> play(StreamObserver<PlayResponse> out) {
            Stream stream = new Stream(AUTH.get(), out);
            streams.add(stream);
            Script script = scripts.poll();
            Thread thread = new Thread(() -> {
                try {
                    if (script == null) {
                        out.onError(Status.UNAVAILABLE.withDescription("no script left").asRuntimeException());
                        return;
                    }
                    script.play(stream);
                } catch (Exception e) {
                    out.onError(Status.INTERNAL.withDescription("script failed: " + e).asRuntimeException());
                }
            }, "fake-referee-stream");
            thread.setDaemon(true);
            thread.start();
            return new StreamObserver<>() {
                @Override
                public void onNext(PlayRequest value) {
                    stream.in.add(value);
                }

                @Override
                public void onError(Throwable t) {
                    stream.in.add(Status.fromThrowable(t));
                }

                @Override
                public void onCompleted() {
                    stream.in.add(Status.OK);
                }
            };
        }
    }

    @Override
    public void close() throws InterruptedException {
        server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        if (group != null) {
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
        }
    }
}
