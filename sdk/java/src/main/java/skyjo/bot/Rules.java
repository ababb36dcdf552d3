package skyjo.bot;

import java.util.Map;

/**
 * The rules in force in a game (docs/rules.md), every option set: GameStart always sends them complete.
 *
 * @param preset the preset they came from: official, indonesian, turkish, french or slovenian
 * @param columnClear whether a column of three equal revealed values is removed
 * @param clearOnFinalReveal whether such columns also clear when hidden cards are turned at the round's end
 * @param finisherPenalty what happens to a finisher who is not strictly lowest
 * @param nextRoundStarter who starts the rounds after the first
 * @param endScore the game ends after a round in which some total reaches this
 * @param finalTie what a tie for the lowest final total does
 */
public record Rules(
        String preset,
        boolean columnClear,
        boolean clearOnFinalReveal,
        FinisherPenalty finisherPenalty,
        NextRoundStarter nextRoundStarter,
        int endScore,
        FinalTie finalTie) {

    /** The publisher's rules. */
    public static final Rules OFFICIAL = new Rules(
            "official", true, true, FinisherPenalty.DOUBLE_IF_POSITIVE, NextRoundStarter.FINISHER, 100,
            FinalTie.SHARED);

    private static final Map<String, Rules> PRESETS = Map.of(
            "official", OFFICIAL,
            "indonesian", new Rules("indonesian", true, true, FinisherPenalty.DOUBLE, NextRoundStarter.ROUND_WINNER,
                    100, FinalTie.SHARED),
            "turkish", new Rules("turkish", true, true, FinisherPenalty.DOUBLE, NextRoundStarter.ROUND_WINNER,
                    100, FinalTie.SHARED),
            "french", new Rules("french", true, true, FinisherPenalty.PLUS_10, NextRoundStarter.HIGHEST_REVEAL,
                    100, FinalTie.SHARED),
            "slovenian", new Rules("slovenian", true, true, FinisherPenalty.DOUBLE,
                    NextRoundStarter.HIGHEST_REVEAL, 100, FinalTie.EXTRA_ROUND));

    /** Checks that nothing is missing and the end score is positive. */
    public Rules {
        if (preset == null || finisherPenalty == null || nextRoundStarter == null || finalTie == null) {
            throw new IllegalArgumentException("rules need a preset and every option");
        }
        if (endScore <= 0) {
            throw new IllegalArgumentException("rules option end_score must be an integer > 0, got " + endScore);
        }
    }

    /** The rules of a named preset, or an {@link IllegalArgumentException} naming the known ones. */
    public static Rules preset(String name) {
        Rules rules = PRESETS.get(name.isEmpty() ? "official" : name);
        if (rules == null) {
            throw new IllegalArgumentException("unknown rules preset '" + name
                    + "': expected one of official, indonesian, turkish, french, slovenian");
        }
        return rules;
    }
}
