package skyjo.bot.bench;

import skyjo.bot.SkyjoBot;

/** benchmarks/bench_sdk_java.py's SDK side: the same answer as {@link BareClient} (legal action 0), through the SDK. */
public final class SdkClient {
    private SdkClient() {}

    public static void main(String[] args) {
        SkyjoBot.run(view -> view.legalActions().get(0), args);
    }
}
