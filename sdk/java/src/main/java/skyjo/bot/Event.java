package skyjo.bot;

import java.util.OptionalInt;

/**
 * One public event; only the fields its {@link EventKind} names are set, the others are empty.
 *
 * @param gameId the game
 * @param kind what happened
 * @param seat the seat that acted
 * @param pos a position 0-11 (for column_cleared: the column 0-3)
 * @param value a card value (for reshuffle: the new draw pile's size)
 * @param replaced for swap: the card that left the grid
 * @param round for round_start: the 0-based round
 */
public record Event(String gameId, EventKind kind, OptionalInt seat, OptionalInt pos, OptionalInt value,
        OptionalInt replaced, OptionalInt round) {}
