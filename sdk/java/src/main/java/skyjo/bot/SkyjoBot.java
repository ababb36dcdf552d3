package skyjo.bot;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.ConsoleHandler;
import java.util.logging.Formatter;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import sun.misc.Signal;

/**
 * Runs a bot as a program: the whole {@code main} of a bot is {@code SkyjoBot.run(new MyBot(), args)}.
 *
 * <p>It reads the referee's address and the token from {@code --addr}/{@code --token} or {@code SKYJO_ADDR} /
 * {@code SKYJO_TOKEN}, TLS files from {@code --ca-file}/{@code --client-cert}/{@code --client-key} or
 * {@code SKYJO_CA_FILE}/{@code SKYJO_CLIENT_CERT}/{@code SKYJO_CLIENT_KEY}, plays until the session ends and exits the
 * process with the documented code:
 *
 * <ul>
 *   <li>0: the session ended (the referee closed it), or SIGTERM/SIGINT, or the parent process
 *       ({@code SKYJO_PARENT_PID}) is gone;
 *   <li>1: the referee refused the session (bad token, replaced) or could not be reached within the give-up time;
 *   <li>2: bad usage (an unknown option, no address or token, a TLS file that cannot be used), in one line;
 *   <li>3: the bot ran out of memory ({@link OutOfMemoryError}): a JVM out of memory cannot be trusted to go on.
 * </ul>
 *
 * <p>A signal closes the session; if that has not finished within {@link #STOP_DEADLINE} (a {@code decide} that
 * never returns, say) the process exits at once with status 0. Logs go to stderr: {@code -v} info, {@code -vv} every
 * message.
 */
public final class SkyjoBot {
    /** Exit codes of {@link #run(Bot, String...)}. */
    public static final int EXIT_OK = 0;
    public static final int EXIT_REFUSED = 1;
    public static final int EXIT_USAGE = 2;
    public static final int EXIT_OUT_OF_MEMORY = 3;
    /** After SIGTERM/SIGINT or the parent's death the process ends by itself if the clean stop takes longer. */
    public static final Duration STOP_DEADLINE = Duration.ofMillis(750);
    /** How often the parent process is checked (the JDK has no pidfd; /proc is cheap to read). */
    static final Duration PARENT_CHECK = Duration.ofMillis(200);

    private static final String USAGE = "usage: java -jar bot.jar [--addr HOST:PORT|unix:PATH] [--token TOKEN] "
            + "[--name NAME] [--ca-file PEM [--client-cert PEM --client-key PEM]] [--give-up SECONDS] [--thread] [-v|-vv]";

    private SkyjoBot() {}

    /** Plays {@code bot} with the settings in {@code args} and the environment, then exits the process (never returns). */
    public static void run(Bot bot, String... args) {
        System.exit(play(bot, args));
    }

    /** As {@link #run(Bot, String...)} but returns the exit code instead of exiting (signals still end the process). */
    public static int play(Bot bot, String... args) {
        BotClient.Builder builder = BotClient.builder(bot);
        int verbose = 0;
        String clientCert = null;
        String clientKey = null;
        try {
            for (int i = 0; i < args.length; i++) {
                String arg = args[i];
                switch (arg) {
                    case "--addr" -> builder.address(value(args, ++i, arg));
                    case "--token" -> builder.token(value(args, ++i, arg));
                    case "--name" -> builder.name(value(args, ++i, arg));
                    case "--ca-file" -> builder.caFile(value(args, ++i, arg));
                    case "--client-cert" -> clientCert = value(args, ++i, arg);
                    case "--client-key" -> clientKey = value(args, ++i, arg);
                    case "--give-up" -> builder.giveUpAfter(seconds(value(args, ++i, arg)));
                    case "--thread" -> builder.inline(false);
                    case "--inline" -> builder.inline(true);
                    case "-v", "--verbose" -> verbose += 1;
                    case "-vv" -> verbose += 2;
                    case "-h", "--help" -> {
                        System.out.println(USAGE);
                        return EXIT_OK;
                    }
                    default -> throw new IllegalArgumentException("unknown option '" + arg + "'; " + USAGE);
                }
            }
            if (clientCert != null || clientKey != null) {
                builder.clientCertificate(orEnv(clientCert, "SKYJO_CLIENT_CERT"), orEnv(clientKey, "SKYJO_CLIENT_KEY"));
            }
            configureLogging(verbose);
            BotClient client = builder.build();
            return play(client);
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            return EXIT_USAGE;
        }
    }

    private static String orEnv(String given, String variable) {
        if (given != null) {
            return given;
        }
        String value = System.getenv(variable);
        return value == null ? "" : value;
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length) {
            throw new IllegalArgumentException(option + " needs a value; " + USAGE);
        }
        return args[i];
    }

    private static Duration seconds(String text) {
        try {
            double seconds = Double.parseDouble(text);
            if (seconds >= 0 && Double.isFinite(seconds)) {
                return Duration.ofMillis((long) (seconds * 1000));
            }
        } catch (NumberFormatException e) {
            // fall through to the message below
        }
        throw new IllegalArgumentException("--give-up '" + text + "': expected a number of seconds >= 0");
    }

    /** Runs a built client with signal handling and the parent watch; returns the exit code. */
    static int play(BotClient client) {
        StopDeadline deadline = new StopDeadline();
        Runnable stop = () -> {
            deadline.arm();
            client.stop();
        };
        for (String name : new String[] {"TERM", "INT"}) {
            Signal.handle(new Signal(name), signal -> {
                BotClient.LOG.info("SIG" + signal.getName() + ": closing the session");
                stop.run();
            });
        }
        watchParent(stop);
        try {
            BotClient.Stats stats = client.run();
            BotClient.LOG.info(String.format("played %d games, %d decisions (%d decide errors, %d strikes)",
                    stats.games(), stats.decisions(), stats.decideErrors(), stats.strikes()));
            return EXIT_OK;
        } catch (SessionRefusedException | ConnectionLostException e) {
            System.err.println("error: " + e.getMessage());
            return EXIT_REFUSED;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return EXIT_OK;
        } finally {
            deadline.disarm();
        }
    }

    /** Ends the process with status 0 if the session has not closed {@link #STOP_DEADLINE} after a stop was asked. */
    private static final class StopDeadline {
        private final CountDownLatch done = new CountDownLatch(1);
        private final AtomicBoolean armed = new AtomicBoolean();

        void arm() {
            if (!armed.compareAndSet(false, true)) {
                return;
            }
            Thread watch = new Thread(() -> {
                try {
                    if (done.await(STOP_DEADLINE.toMillis(), TimeUnit.MILLISECONDS)) {
                        return;
                    }
                } catch (InterruptedException e) {
                    return;
                }
                System.err.println("skyjo-bot: the session did not close within 0.75 s; exiting now");
                System.err.flush();
                Runtime.getRuntime().halt(EXIT_OK);
            }, "skyjo-stop-deadline");
            watch.setDaemon(true);
            watch.start();
        }

        void disarm() {
            done.countDown();
        }
    }

    /**
     * With {@code SKYJO_PARENT_PID} set (referees and tournaments set it), ends the session as on SIGTERM once that
     * process is no longer an ancestor of this one: a killed tournament leaves no bot behind. An ancestor, not only the
     * parent: {@code sh -c "java -jar bot.jar"} works.
     */
    private static void watchParent(Runnable stop) {
        String text = System.getenv("SKYJO_PARENT_PID");
        if (text == null || !text.matches("\\d{1,10}")) {
            return;
        }
        long parent = Long.parseLong(text);
        Thread watch = new Thread(() -> {
            try {
                while (isAncestor(parent)) {
                    Thread.sleep(PARENT_CHECK.toMillis()); // polling: the JDK offers no way to wait on a non-child
                }
            } catch (InterruptedException e) {
                return;
            }
            BotClient.LOG.info("the parent process " + parent + " is gone: closing the session");
            stop.run();
        }, "skyjo-parent-watch");
        watch.setDaemon(true);
        watch.start();
    }

    /** Whether {@code pid} is this process's parent, or its parent's parent, and so on. */
    static boolean isAncestor(long pid) {
        long current = ProcessHandle.current().pid();
        for (int depth = 0; depth < 64; depth++) {
            long up = parentOf(current);
            if (up == pid) {
                return true;
            }
            if (up <= 1) {
                return false;
            }
            current = up;
        }
        return false;
    }

    private static long parentOf(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(fields[1]);
        } catch (IOException | RuntimeException e) {
            return ProcessHandle.of(pid).flatMap(ProcessHandle::parent).map(ProcessHandle::pid).orElse(0L);
        }
    }

    /** An out-of-memory JVM cannot be trusted to go on: say so on stderr and end with {@link #EXIT_OUT_OF_MEMORY}. */
    static void outOfMemory(OutOfMemoryError e) {
        System.err.println("skyjo-bot: out of memory (" + e.getMessage() + "): exiting");
        System.err.flush();
        Runtime.getRuntime().halt(EXIT_OUT_OF_MEMORY);
    }

    /** One line per record on stderr for the SDK's logger: WARNING by default, -v INFO, -vv every message. */
    static void configureLogging(int verbose) {
        Logger log = BotClient.LOG;
        Level level = verbose >= 2 ? Level.FINE : verbose == 1 ? Level.INFO : Level.WARNING;
        log.setLevel(level);
        log.setUseParentHandlers(false);
        for (var handler : log.getHandlers()) {
            log.removeHandler(handler);
        }
        ConsoleHandler handler = new ConsoleHandler(); // stderr
        handler.setLevel(level);
        handler.setFormatter(new OneLine());
        log.addHandler(handler);
    }

    private static final class OneLine extends Formatter {
        private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss,SSS");

        @Override
        public String format(LogRecord record) {
            StringBuilder out = new StringBuilder()
                    .append(LocalDateTime.now().format(TIME)).append(' ')
                    .append(record.getLoggerName()).append(' ')
                    .append(record.getLevel().getName()).append(' ')
                    .append(formatMessage(record)).append(System.lineSeparator());
            if (record.getThrown() != null) {
                java.io.StringWriter trace = new java.io.StringWriter();
                record.getThrown().printStackTrace(new java.io.PrintWriter(trace));
                out.append(trace);
            }
            return out.toString();
        }
    }
}
