package skyjo.bot;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;

/**
 * One player's 12 slots as everyone sees them: a hidden slot has no value.
 *
 * <p>Positions are row-major, {@code pos = 4*row + col} (rows 0-2, columns 0-3); column {@code c} is positions
 * {@code c, c+4, c+8}.
 *
 * @param states the state of each slot, position 0 first
 * @param values the value of each revealed slot, empty for hidden and removed ones
 */
public record Grid(List<SlotState> states, List<OptionalInt> values) {
    /** Rows of a grid. */
    public static final int ROWS = 3;
    /** Columns of a grid. */
    public static final int COLUMNS = 4;
    /** Slots of a grid. */
    public static final int SIZE = ROWS * COLUMNS;

    /** Checks the sizes and that exactly the revealed slots have a value; the lists are copied (immutable). */
    public Grid {
        states = List.copyOf(states);
        values = List.copyOf(values);
        if (states.size() != SIZE || values.size() != SIZE) {
            throw new IllegalArgumentException("a grid has 12 slots, got " + states.size() + " states and "
                    + values.size() + " values");
        }
        for (int pos = 0; pos < SIZE; pos++) {
            if ((states.get(pos) == SlotState.REVEALED) != values.get(pos).isPresent()) {
                throw new IllegalArgumentException("slot " + pos + " is " + states.get(pos).text()
                        + ": only revealed slots have a value");
            }
        }
    }

    /** The three positions of {@code column} (0-3), top to bottom. */
    public static int[] columnPositions(int column) {
        return new int[] {column, column + COLUMNS, column + 2 * COLUMNS};
    }

    /** The state of the slot at {@code pos}. */
    public SlotState state(int pos) {
        return states.get(pos);
    }

    /** The value at {@code pos} if it is revealed, else empty. */
    public OptionalInt value(int pos) {
        return values.get(pos);
    }

    /** Whether the slot at {@code pos} is face down. */
    public boolean isHidden(int pos) {
        return states.get(pos) == SlotState.HIDDEN;
    }

    /** Whether the slot at {@code pos} is face up. */
    public boolean isRevealed(int pos) {
        return states.get(pos) == SlotState.REVEALED;
    }

    /** Hidden positions, ascending. */
    public List<Integer> hiddenPositions() {
        return positionsIn(SlotState.HIDDEN);
    }

    /** Revealed positions, ascending. */
    public List<Integer> revealedPositions() {
        return positionsIn(SlotState.REVEALED);
    }

    /** Positions that are not removed (hidden or revealed), ascending. */
    public List<Integer> openPositions() {
        List<Integer> out = new ArrayList<>(SIZE);
        for (int pos = 0; pos < SIZE; pos++) {
            if (states.get(pos) != SlotState.REMOVED) {
                out.add(pos);
            }
        }
        return List.copyOf(out);
    }

    private List<Integer> positionsIn(SlotState state) {
        List<Integer> out = new ArrayList<>(SIZE);
        for (int pos = 0; pos < SIZE; pos++) {
            if (states.get(pos) == state) {
                out.add(pos);
            }
        }
        return List.copyOf(out);
    }

    /** The sum of the revealed values. */
    public int revealedSum() {
        int sum = 0;
        for (OptionalInt value : values) {
            sum += value.orElse(0);
        }
        return sum;
    }

    /** The values of {@code column} (0-3), top to bottom, empty where not revealed. */
    public List<OptionalInt> column(int column) {
        int[] positions = columnPositions(column);
        return List.of(values.get(positions[0]), values.get(positions[1]), values.get(positions[2]));
    }

    /** Three text lines, {@code ?} for hidden and {@code .} for removed slots. */
    public String render() {
        StringBuilder out = new StringBuilder();
        for (int row = 0; row < ROWS; row++) {
            for (int col = 0; col < COLUMNS; col++) {
                int pos = COLUMNS * row + col;
                String cell = switch (states.get(pos)) {
                    case HIDDEN -> "?";
                    case REMOVED -> ".";
                    case REVEALED -> Integer.toString(values.get(pos).getAsInt());
                };
                out.append(col == 0 ? "" : " ").append(String.format("%3s", cell));
            }
            if (row < ROWS - 1) {
                out.append('\n');
            }
        }
        return out.toString();
    }
}
