//! The vocabulary a bot sees: actions, rules, the seat's view, and what the referee tells it.
//!
//! The same words as the Python SDK's `skyjo_bot.types` and the game record format (`skyjo-game/1`).
//! Grid positions are numbered row-major, `pos = 4*row + col` (rows 0-2, columns 0-3); column `c` is
//! positions `c, c+4, c+8`.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// Rows of a grid.
pub const ROWS: usize = 3;
/// Columns of a grid.
pub const COLUMNS: usize = 4;
/// Slots of a grid.
pub const GRID_SIZE: usize = ROWS * COLUMNS;

/// How many cards of each value the 150-card deck holds, lowest value first.
pub const DECK_COUNTS: [(i32, u32); 15] = [
    (-2, 5),
    (-1, 10),
    (0, 15),
    (1, 10),
    (2, 10),
    (3, 10),
    (4, 10),
    (5, 10),
    (6, 10),
    (7, 10),
    (8, 10),
    (9, 10),
    (10, 10),
    (11, 10),
    (12, 10),
];

/// The three grid positions of `column` (0-3), top to bottom.
pub fn column_positions(column: usize) -> [usize; 3] {
    [column, column + COLUMNS, column + 2 * COLUMNS]
}

// ------------------------------------------------------------------------------ actions

/// The action vocabulary of `skyjo-game/1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ActionKind {
    Reveal,
    Draw,
    Take,
    Swap,
}

impl ActionKind {
    /// The record's word: `reveal`, `draw`, `take`, `swap`.
    pub fn as_str(self) -> &'static str {
        match self {
            ActionKind::Reveal => "reveal",
            ActionKind::Draw => "draw",
            ActionKind::Take => "take",
            ActionKind::Swap => "swap",
        }
    }
}

impl fmt::Display for ActionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One action, as in a game record. Its text form (`Display`, [`Action::parse`]) is `"swap 3"`.
///
/// Build one with [`Action::reveal`], [`Action::swap`], [`Action::draw`], [`Action::take`] (they check the
/// position), or pick one of [`View::legal_actions`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Turn the hidden card at a position: an opening reveal, or after discarding a drawn card.
    Reveal(usize),
    /// Take the top card of the draw pile into hand.
    Draw,
    /// Take the top discard into hand (a swap must follow).
    Take,
    /// Put the card in hand at a position; the card there is discarded.
    Swap(usize),
}

impl Action {
    /// `reveal pos`. Panics unless `pos` is 0-11 (the SDK turns a panic in `decide` into an error reply).
    pub fn reveal(pos: usize) -> Action {
        Action::Reveal(checked_pos(ActionKind::Reveal, pos))
    }

    /// `swap pos`. Panics unless `pos` is 0-11.
    pub fn swap(pos: usize) -> Action {
        Action::Swap(checked_pos(ActionKind::Swap, pos))
    }

    /// `draw`.
    pub fn draw() -> Action {
        Action::Draw
    }

    /// `take`.
    pub fn take() -> Action {
        Action::Take
    }

    /// Which action this is.
    pub fn kind(&self) -> ActionKind {
        match self {
            Action::Reveal(_) => ActionKind::Reveal,
            Action::Draw => ActionKind::Draw,
            Action::Take => ActionKind::Take,
            Action::Swap(_) => ActionKind::Swap,
        }
    }

    /// The position of a reveal or swap.
    pub fn pos(&self) -> Option<usize> {
        match *self {
            Action::Reveal(pos) | Action::Swap(pos) => Some(pos),
            Action::Draw | Action::Take => None,
        }
    }

    /// Read `"draw"`, `"take"`, `"reveal 5"` or `"swap 11"` (the same as `text.parse::<Action>()`).
    pub fn parse(text: &str) -> Result<Action, ParseActionError> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let fail = |why: String| ParseActionError(format!("cannot read action {text:?}: {why}"));
        let (word, pos) = match words.as_slice() {
            [word] => (*word, None),
            [word, pos] => match pos.parse::<usize>() {
                Ok(pos) => (*word, Some(pos)),
                Err(_) => return Err(fail(format!("position {pos:?} is not a number 0-11"))),
            },
            _ => return Err(fail("expected 'draw', 'take', 'reveal POS' or 'swap POS'".into())),
        };
        let kind = match word.to_ascii_lowercase().as_str() {
            "reveal" => ActionKind::Reveal,
            "draw" => ActionKind::Draw,
            "take" => ActionKind::Take,
            "swap" => ActionKind::Swap,
            other => return Err(fail(format!("unknown action {other:?}: expected one of reveal, draw, take, swap"))),
        };
        match (kind, pos) {
            (ActionKind::Reveal | ActionKind::Swap, Some(pos)) if pos < GRID_SIZE => {
                Ok(if kind == ActionKind::Reveal { Action::Reveal(pos) } else { Action::Swap(pos) })
            }
            (ActionKind::Reveal | ActionKind::Swap, _) => {
                Err(fail(format!("{kind} needs a position 0-11 (pos = 4*row + col)")))
            }
            (_, Some(pos)) => Err(fail(format!("{kind} takes no position, got {pos}"))),
            (ActionKind::Draw, None) => Ok(Action::Draw),
            (ActionKind::Take, None) => Ok(Action::Take),
        }
    }
}

fn checked_pos(kind: ActionKind, pos: usize) -> usize {
    assert!(pos < GRID_SIZE, "{kind} needs a position 0-11 (pos = 4*row + col), got {pos}");
    pos
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.pos() {
            Some(pos) => write!(f, "{} {pos}", self.kind()),
            None => f.write_str(self.kind().as_str()),
        }
    }
}

impl FromStr for Action {
    type Err = ParseActionError;

    fn from_str(text: &str) -> Result<Action, ParseActionError> {
        Action::parse(text)
    }
}

/// A text that does not spell an action; the message says what is expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParseActionError(String);

// -------------------------------------------------------------------------------- rules

/// What happens to a finisher whose score is not strictly lowest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FinisherPenalty {
    DoubleIfPositive,
    Double,
    Plus10,
}

/// Who starts the rounds after the first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NextRoundStarter {
    Finisher,
    RoundWinner,
    HighestReveal,
}

/// What a tie for the lowest final total does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FinalTie {
    Shared,
    ExtraRound,
}

impl FinisherPenalty {
    /// The rules' word: `double_if_positive`, `double`, `plus_10`.
    pub fn as_str(self) -> &'static str {
        match self {
            FinisherPenalty::DoubleIfPositive => "double_if_positive",
            FinisherPenalty::Double => "double",
            FinisherPenalty::Plus10 => "plus_10",
        }
    }
}

impl NextRoundStarter {
    /// The rules' word: `finisher`, `round_winner`, `highest_reveal`.
    pub fn as_str(self) -> &'static str {
        match self {
            NextRoundStarter::Finisher => "finisher",
            NextRoundStarter::RoundWinner => "round_winner",
            NextRoundStarter::HighestReveal => "highest_reveal",
        }
    }
}

impl FinalTie {
    /// The rules' word: `shared`, `extra_round`.
    pub fn as_str(self) -> &'static str {
        match self {
            FinalTie::Shared => "shared",
            FinalTie::ExtraRound => "extra_round",
        }
    }
}

/// The rules in force in a game (docs/rules.md): a preset's name and every option's value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rules {
    /// The preset named (`official`, `indonesian`, `turkish`, `french`, `slovenian`), if any.
    pub preset: Option<String>,
    pub column_clear: bool,
    pub clear_on_final_reveal: bool,
    pub finisher_penalty: FinisherPenalty,
    pub next_round_starter: NextRoundStarter,
    pub end_score: u32,
    pub final_tie: FinalTie,
}

impl Default for Rules {
    /// The official rules.
    fn default() -> Rules {
        Rules {
            preset: Some("official".into()),
            column_clear: true,
            clear_on_final_reveal: true,
            finisher_penalty: FinisherPenalty::DoubleIfPositive,
            next_round_starter: NextRoundStarter::Finisher,
            end_score: 100,
            final_tie: FinalTie::Shared,
        }
    }
}

impl Rules {
    /// A preset's rules (`None` for a name this SDK does not know).
    pub fn preset(name: &str) -> Option<Rules> {
        let official = Rules { preset: Some(name.to_string()), ..Rules::default() };
        let (penalty, starter, tie) = match name {
            "official" => return Some(official),
            "indonesian" | "turkish" => (FinisherPenalty::Double, NextRoundStarter::RoundWinner, FinalTie::Shared),
            "french" => (FinisherPenalty::Plus10, NextRoundStarter::HighestReveal, FinalTie::Shared),
            "slovenian" => (FinisherPenalty::Double, NextRoundStarter::HighestReveal, FinalTie::ExtraRound),
            _ => return None,
        };
        Some(Rules { finisher_penalty: penalty, next_round_starter: starter, final_tie: tie, ..official })
    }
}

/// How long a seat may think and how many faults it may make in one game (0: no limit, never, no grace).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TimeControl {
    pub decision_ms: u32,
    pub bank_ms: u32,
    pub max_strikes: u32,
    pub grace_ms: u32,
}

// --------------------------------------------------------------------------------- view

/// Which decision is due: the four moments a player chooses something.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DecisionKind {
    /// Reveal one of two opening cards (legal: `reveal` of hidden slots).
    OpeningReveal,
    /// The start of a turn (legal: `draw`, and `take` when there is a discard).
    DrawOrTake,
    /// After drawing [`View::hand`]: swap it, or discard it and reveal a hidden slot.
    SwapOrReveal,
    /// After taking the discard: swap it.
    SwapAfterTake,
}

impl DecisionKind {
    /// The protocol's word: `opening_reveal`, `draw_or_take`, `swap_or_reveal`, `swap_after_take`.
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionKind::OpeningReveal => "opening_reveal",
            DecisionKind::DrawOrTake => "draw_or_take",
            DecisionKind::SwapOrReveal => "swap_or_reveal",
            DecisionKind::SwapAfterTake => "swap_after_take",
        }
    }
}

impl fmt::Display for DecisionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a slot shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SlotState {
    Hidden,
    Revealed,
    Removed,
}

impl SlotState {
    /// `hidden`, `revealed`, `removed`.
    pub fn as_str(self) -> &'static str {
        match self {
            SlotState::Hidden => "hidden",
            SlotState::Revealed => "revealed",
            SlotState::Removed => "removed",
        }
    }
}

/// One grid slot: face down, face up with its value, or removed with its column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Slot {
    Hidden,
    Revealed(i32),
    Removed,
}

impl Slot {
    /// Hidden, revealed or removed.
    pub fn state(self) -> SlotState {
        match self {
            Slot::Hidden => SlotState::Hidden,
            Slot::Revealed(_) => SlotState::Revealed,
            Slot::Removed => SlotState::Removed,
        }
    }

    /// The card's value when revealed.
    pub fn value(self) -> Option<i32> {
        match self {
            Slot::Revealed(value) => Some(value),
            _ => None,
        }
    }
}

/// One player's 12 slots as everyone sees them (`slots[pos]`, `pos = 4*row + col`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Grid {
    pub slots: [Slot; GRID_SIZE],
}

impl Grid {
    /// The value at `pos` if it is revealed.
    pub fn value(&self, pos: usize) -> Option<i32> {
        self.slots[pos].value()
    }

    /// The state of the slot at `pos`.
    pub fn state(&self, pos: usize) -> SlotState {
        self.slots[pos].state()
    }

    /// Positions still face down, ascending.
    pub fn hidden_positions(&self) -> Vec<usize> {
        self.positions(|slot| slot == Slot::Hidden)
    }

    /// Positions face up, ascending.
    pub fn revealed_positions(&self) -> Vec<usize> {
        self.positions(|slot| matches!(slot, Slot::Revealed(_)))
    }

    /// Positions not removed (hidden or revealed), ascending: where a card can be swapped in.
    pub fn open_positions(&self) -> Vec<usize> {
        self.positions(|slot| slot != Slot::Removed)
    }

    /// The sum of the revealed values.
    pub fn revealed_sum(&self) -> i32 {
        self.slots.iter().filter_map(|slot| slot.value()).sum()
    }

    /// The values of column `column` (0-3), top to bottom (`None` where not revealed).
    pub fn column(&self, column: usize) -> [Option<i32>; 3] {
        column_positions(column).map(|pos| self.value(pos))
    }

    fn positions(&self, keep: impl Fn(Slot) -> bool) -> Vec<usize> {
        (0..GRID_SIZE).filter(|&pos| keep(self.slots[pos])).collect()
    }
}

impl fmt::Display for Grid {
    /// Three lines, `?` for hidden and `.` for removed slots.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for row in 0..ROWS {
            if row > 0 {
                writeln!(f)?;
            }
            for col in 0..COLUMNS {
                let cell = match self.slots[COLUMNS * row + col] {
                    Slot::Hidden => "?".to_string(),
                    Slot::Removed => ".".to_string(),
                    Slot::Revealed(value) => value.to_string(),
                };
                write!(f, "{}{cell:>3}", if col > 0 { " " } else { "" })?;
            }
        }
        Ok(())
    }
}

/// Everything one seat may know when a decision is due: the bot's whole world.
///
/// Never a hidden card's value (your own included) nor the order of the draw pile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View {
    /// The game this decision belongs to.
    pub game_id: String,
    /// The referee's id for this decision (the SDK echoes it).
    pub request_id: u64,
    /// Your seat, 0-based: `players[seat]` and `grids[seat]` are yours.
    pub seat: usize,
    /// The players' names in seat order (from GameStart).
    pub players: Vec<String>,
    /// The rules in force (from GameStart).
    pub rules: Rules,
    /// The time control in force (from GameStart; `None` if the referee sent none).
    pub time_control: Option<TimeControl>,
    /// The 0-based round.
    pub round: u32,
    /// Which decision is due.
    pub decision: DecisionKind,
    /// Every seat's grid, in seat order.
    pub grids: Vec<Grid>,
    /// The discard pile, bottom first: the last value is the top card.
    pub discard_pile: Vec<i32>,
    /// Cards left to draw.
    pub draw_pile_size: u32,
    /// The card you drew or took (only in the two swap decisions).
    pub hand: Option<i32>,
    /// Game totals before this round, one per seat.
    pub totals: Vec<i32>,
    /// Scores of the finished rounds of this game, one entry per round, one value per seat.
    pub round_scores: Vec<Vec<i32>>,
    /// The seat that ended the round, once one has (everyone else has one last turn).
    pub finisher: Option<usize>,
    /// The seat that started this round's turns (`None` during opening reveals).
    pub starter: Option<usize>,
    /// The actions you may play: answer with one of them.
    pub legal_actions: Vec<Action>,
    /// Your time for this answer: the smaller of the per-decision limit and what is left of your bank.
    pub time_left: Duration,
}

impl View {
    /// How many seats the game has.
    pub fn num_players(&self) -> usize {
        self.grids.len()
    }

    /// Your grid.
    pub fn my_grid(&self) -> &Grid {
        &self.grids[self.seat]
    }

    /// The top card of the discard pile.
    pub fn discard_top(&self) -> Option<i32> {
        self.discard_pile.last().copied()
    }

    /// Whether `action` is among the legal actions.
    pub fn is_legal(&self, action: Action) -> bool {
        self.legal_actions.contains(&action)
    }

    /// The cards this seat cannot see (hidden slots plus the draw pile), by value: the deck minus every
    /// visible card (grids, discard pile, hand).
    pub fn unseen_cards(&self) -> BTreeMap<i32, u32> {
        let mut unseen: BTreeMap<i32, u32> = DECK_COUNTS.into_iter().collect();
        let grid_values = self.grids.iter().flat_map(|grid| grid.slots.iter().filter_map(|slot| slot.value()));
        for value in self.discard_pile.iter().copied().chain(grid_values).chain(self.hand) {
            if let Some(count) = unseen.get_mut(&value) {
                *count = count.saturating_sub(1);
            }
        }
        unseen
    }

    /// The average value of the cards this seat cannot see: what a hidden card is worth on average.
    pub fn expected_hidden_value(&self) -> f64 {
        let unseen = self.unseen_cards();
        let count: u32 = unseen.values().sum();
        if count == 0 {
            return 0.0;
        }
        let sum: i64 = unseen.iter().map(|(&value, &n)| i64::from(value) * i64::from(n)).sum();
        sum as f64 / f64::from(count)
    }
}

// ------------------------------------------------------------------------------- events

/// The kinds of public events (docs/writing-a-bot.md, section 6); `Other` keeps a kind this SDK does
/// not know yet (later referees may add some).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    RoundStart,
    Reveal,
    Draw,
    Take,
    Discard,
    Swap,
    ColumnCleared,
    Reshuffle,
    TurnsStart,
    RoundFinishing,
    FinalReveal,
    Other(String),
}

impl EventKind {
    /// The protocol's word (`round_start`, `swap`, ...).
    pub fn as_str(&self) -> &str {
        match self {
            EventKind::RoundStart => "round_start",
            EventKind::Reveal => "reveal",
            EventKind::Draw => "draw",
            EventKind::Take => "take",
            EventKind::Discard => "discard",
            EventKind::Swap => "swap",
            EventKind::ColumnCleared => "column_cleared",
            EventKind::Reshuffle => "reshuffle",
            EventKind::TurnsStart => "turns_start",
            EventKind::RoundFinishing => "round_finishing",
            EventKind::FinalReveal => "final_reveal",
            EventKind::Other(word) => word,
        }
    }

    /// The kind a protocol word names.
    pub fn from_word(word: &str) -> EventKind {
        match word {
            "round_start" => EventKind::RoundStart,
            "reveal" => EventKind::Reveal,
            "draw" => EventKind::Draw,
            "take" => EventKind::Take,
            "discard" => EventKind::Discard,
            "swap" => EventKind::Swap,
            "column_cleared" => EventKind::ColumnCleared,
            "reshuffle" => EventKind::Reshuffle,
            "turns_start" => EventKind::TurnsStart,
            "round_finishing" => EventKind::RoundFinishing,
            "final_reveal" => EventKind::FinalReveal,
            other => EventKind::Other(other.to_string()),
        }
    }
}

/// One public event; only the fields its kind uses are set (see [`EventKind`] and the protocol).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub game_id: String,
    pub kind: EventKind,
    /// The seat that acted.
    pub seat: Option<usize>,
    /// A position 0-11 (for `column_cleared`: the column 0-3).
    pub pos: Option<usize>,
    /// A card value (for `reshuffle`: the new draw pile's size).
    pub value: Option<i32>,
    /// For `swap`: the card that left the grid.
    pub replaced: Option<i32>,
    /// For `round_start`: the 0-based round.
    pub round: Option<u32>,
}

// ------------------------------------------------------------------- game start and end

/// Sent to every seat when a game begins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameStart {
    pub game_id: String,
    /// Your seat, 0-based.
    pub seat: usize,
    /// Names in seat order.
    pub players: Vec<String>,
    pub rules: Rules,
    pub time_control: Option<TimeControl>,
}

/// The referee played for this seat because its answer (or silence) was at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Strike {
    pub game_id: String,
    /// The request concerned (0 when the fault was not an answer to a request).
    pub request_id: u64,
    /// `timeout`, `illegal` or `malformed`.
    pub reason: String,
    /// What was wrong and what was expected.
    pub detail: String,
    /// What the referee played instead, if anything.
    pub played: Option<Action>,
    /// This seat's strikes in this game, this one included.
    pub strikes: u32,
    /// Strikes that make the seat forfeit.
    pub max_strikes: u32,
}

/// Sent to every seat when a round ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoundResult {
    pub game_id: String,
    pub round: u32,
    /// The seat that revealed its last card first.
    pub finisher: usize,
    /// Round scores before the finisher penalty, one per seat.
    pub raw: Vec<i32>,
    /// Round scores after it.
    pub scores: Vec<i32>,
    /// Game totals after this round.
    pub totals: Vec<i32>,
}

/// Sent to every seat when a game is over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameResult {
    pub game_id: String,
    /// Final totals (lower is better).
    pub totals: Vec<i32>,
    /// Competition ranks: 1 = best, ties share.
    pub ranks: Vec<u32>,
    /// Seats with rank 1, ascending.
    pub winners: Vec<usize>,
    /// Seats that forfeited; they rank last.
    pub forfeits: Vec<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_read_and_write_their_text_form() {
        for text in ["draw", "take", "reveal 0", "swap 11"] {
            assert_eq!(Action::parse(text).unwrap().to_string(), text);
        }
        assert_eq!("SWAP 3".parse::<Action>(), Ok(Action::swap(3)));
        assert_eq!(Action::parse(" reveal  5 "), Ok(Action::Reveal(5)));
    }

    #[test]
    fn bad_action_texts_say_what_is_expected() {
        let cases = [
            ("", "expected 'draw', 'take', 'reveal POS' or 'swap POS'"),
            ("swap", "swap needs a position 0-11"),
            ("swap 12", "swap needs a position 0-11"),
            ("swap x", "position \"x\" is not a number 0-11"),
            ("draw 3", "draw takes no position, got 3"),
            ("jump 3", "unknown action \"jump\""),
            ("swap 1 2", "expected 'draw'"),
        ];
        for (text, expected) in cases {
            let message = Action::parse(text).unwrap_err().to_string();
            assert!(message.contains(expected), "{text:?}: {message}");
        }
    }

    #[test]
    #[should_panic(expected = "reveal needs a position 0-11 (pos = 4*row + col), got 12")]
    fn a_position_off_the_grid_panics() {
        let _ = Action::reveal(12);
    }

    #[test]
    fn grids_list_positions_in_ascending_order() {
        let mut slots = [Slot::Hidden; GRID_SIZE];
        slots[3] = Slot::Revealed(7);
        slots[1] = Slot::Revealed(-2);
        slots[0] = Slot::Removed;
        slots[4] = Slot::Removed;
        slots[8] = Slot::Removed;
        let grid = Grid { slots };
        assert_eq!(grid.revealed_positions(), vec![1, 3]);
        assert_eq!(grid.hidden_positions(), vec![2, 5, 6, 7, 9, 10, 11]);
        assert_eq!(grid.open_positions().len(), 9);
        assert_eq!(grid.revealed_sum(), 5);
        assert_eq!(grid.column(1), [Some(-2), None, None]);
        assert_eq!(grid.to_string().lines().next(), Some("  .  -2   ?   7"));
    }

    #[test]
    fn presets_match_the_rulebooks() {
        let french = Rules::preset("french").unwrap();
        assert_eq!(french.finisher_penalty, FinisherPenalty::Plus10);
        assert_eq!(french.next_round_starter, NextRoundStarter::HighestReveal);
        assert_eq!(Rules::preset("official"), Some(Rules::default()));
        assert_eq!(Rules::preset("chess"), None);
    }
}
