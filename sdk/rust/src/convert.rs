//! Protocol messages (`skyjo.v1`, generated into [`crate::proto`]) to the SDK's types, and replies back.
//!
//! A message that cannot be read gives a [`ProtocolError`] saying what was wrong and what was expected.

use std::time::Duration;

use crate::proto;
use crate::types::{
    Action, DecisionKind, Event, EventKind, FinalTie, FinisherPenalty, GRID_SIZE, GameResult, GameStart, Grid,
    NextRoundStarter, RoundResult, Rules, Slot, Strike, TimeControl, View,
};

/// The protocol version this SDK speaks (Hello.protocol_version).
pub const PROTOCOL_VERSION: u32 = 1;

/// The longest error text sent in a reply.
const MAX_ERROR_CHARS: usize = 500;

/// A protocol message that is missing something or holds an impossible value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProtocolError(pub String);

fn fail<T>(why: String) -> Result<T, ProtocolError> {
    Err(ProtocolError(why))
}

/// The first message of every stream.
pub fn hello(name: &str, version: &str) -> proto::PlayRequest {
    let hello = proto::Hello { name: name.into(), version: version.into(), protocol_version: PROTOCOL_VERSION };
    proto::PlayRequest { message: Some(proto::play_request::Message::Hello(hello)) }
}

/// A reply by index when `action` is among `legal`, else spelled out (the referee then says why it is not legal).
pub fn reply(request_id: u64, action: Action, legal: &[Action]) -> proto::DecisionReply {
    let choice = match legal.iter().position(|&a| a == action) {
        Some(index) => proto::decision_reply::Choice::Index(index as u32),
        None => proto::decision_reply::Choice::Action(action_to_proto(action)),
    };
    proto::DecisionReply { request_id, choice: Some(choice) }
}

/// A reply that gives up on a decision and says why (the referee strikes at once).
pub fn error_reply(request_id: u64, reason: &str) -> proto::DecisionReply {
    let text: String = reason.chars().take(MAX_ERROR_CHARS).collect();
    proto::DecisionReply { request_id, choice: Some(proto::decision_reply::Choice::Error(text)) }
}

/// The message for `action`.
pub fn action_to_proto(action: Action) -> proto::Action {
    let kind = match action {
        Action::Reveal(_) => proto::ActionKind::Reveal,
        Action::Draw => proto::ActionKind::Draw,
        Action::Take => proto::ActionKind::Take,
        Action::Swap(_) => proto::ActionKind::Swap,
    };
    proto::Action { kind: kind as i32, pos: action.pos().map(|pos| pos as u32) }
}

/// The action a message spells.
pub fn action_from_proto(msg: &proto::Action) -> Result<Action, ProtocolError> {
    let pos = msg.pos.map(|pos| pos as usize);
    let positioned = |make: fn(usize) -> Action, word: &str| match pos {
        Some(pos) if pos < GRID_SIZE => Ok(make(pos)),
        Some(pos) => fail(format!("{word} at position {pos}: expected a position 0-11")),
        None => fail(format!("{word} without a position: expected Action.pos 0-11")),
    };
    match proto::ActionKind::try_from(msg.kind) {
        Ok(proto::ActionKind::Reveal) => positioned(Action::Reveal, "reveal"),
        Ok(proto::ActionKind::Swap) => positioned(Action::Swap, "swap"),
        Ok(proto::ActionKind::Draw) => Ok(Action::Draw),
        Ok(proto::ActionKind::Take) => Ok(Action::Take),
        _ => fail(format!("action kind {} is not an action: expected reveal, draw, take or swap", msg.kind)),
    }
}

/// The rules a GameStart gives: the preset (empty: official) with every set field overriding it.
pub fn rules_from_proto(msg: Option<&proto::Rules>) -> Rules {
    let Some(msg) = msg else { return Rules::default() };
    let named = if msg.preset.is_empty() { "official" } else { msg.preset.as_str() };
    let mut rules = Rules::preset(named).unwrap_or_else(|| Rules { preset: Some(named.into()), ..Rules::default() });
    // as the Python SDK: any option given without a preset name leaves the rules unnamed
    let any_set = msg.column_clear.is_some()
        || msg.clear_on_final_reveal.is_some()
        || msg.finisher_penalty != 0
        || msg.next_round_starter != 0
        || msg.final_tie != 0
        || msg.end_score != 0;
    if let Some(value) = msg.column_clear {
        rules.column_clear = value;
    }
    if let Some(value) = msg.clear_on_final_reveal {
        rules.clear_on_final_reveal = value;
    }
    if let Ok(value) = proto::FinisherPenalty::try_from(msg.finisher_penalty) {
        let value = match value {
            proto::FinisherPenalty::DoubleIfPositive => Some(FinisherPenalty::DoubleIfPositive),
            proto::FinisherPenalty::Double => Some(FinisherPenalty::Double),
            proto::FinisherPenalty::Plus10 => Some(FinisherPenalty::Plus10),
            proto::FinisherPenalty::Unspecified => None,
        };
        if let Some(value) = value {
            rules.finisher_penalty = value;
        }
    }
    if let Ok(value) = proto::NextRoundStarter::try_from(msg.next_round_starter) {
        let value = match value {
            proto::NextRoundStarter::Finisher => Some(NextRoundStarter::Finisher),
            proto::NextRoundStarter::RoundWinner => Some(NextRoundStarter::RoundWinner),
            proto::NextRoundStarter::HighestReveal => Some(NextRoundStarter::HighestReveal),
            proto::NextRoundStarter::Unspecified => None,
        };
        if let Some(value) = value {
            rules.next_round_starter = value;
        }
    }
    if let Ok(value) = proto::FinalTie::try_from(msg.final_tie) {
        let value = match value {
            proto::FinalTie::Shared => Some(FinalTie::Shared),
            proto::FinalTie::ExtraRound => Some(FinalTie::ExtraRound),
            proto::FinalTie::Unspecified => None,
        };
        if let Some(value) = value {
            rules.final_tie = value;
        }
    }
    if msg.end_score != 0 {
        rules.end_score = msg.end_score;
    }
    if msg.preset.is_empty() && any_set {
        rules.preset = None;
    }
    rules
}

/// The game a GameStart begins.
pub fn game_start_from_proto(msg: &proto::GameStart) -> Result<GameStart, ProtocolError> {
    if msg.players.is_empty() {
        return fail("game start lists no players".into());
    }
    let seat = msg.seat as usize;
    if seat >= msg.players.len() {
        return fail(format!("game start gives seat {seat} in a game of {} players", msg.players.len()));
    }
    Ok(GameStart {
        game_id: msg.game_id.clone(),
        seat,
        players: msg.players.clone(),
        rules: rules_from_proto(msg.rules.as_ref()),
        time_control: msg.time_control.as_ref().map(|tc| TimeControl {
            decision_ms: tc.decision_ms,
            bank_ms: tc.bank_ms,
            max_strikes: tc.max_strikes,
            grace_ms: tc.grace_ms,
        }),
    })
}

fn grid_from_proto(msg: &proto::Grid, index: usize) -> Result<Grid, ProtocolError> {
    if msg.slots.len() != GRID_SIZE {
        return fail(format!("grid {index} has {} slots, expected {GRID_SIZE}", msg.slots.len()));
    }
    let mut slots = [Slot::Hidden; GRID_SIZE];
    for (pos, slot) in msg.slots.iter().enumerate() {
        slots[pos] = match (proto::SlotState::try_from(slot.state), slot.value) {
            (Ok(proto::SlotState::Hidden), None) => Slot::Hidden,
            (Ok(proto::SlotState::Removed), None) => Slot::Removed,
            (Ok(proto::SlotState::Revealed), Some(value)) => Slot::Revealed(value),
            (Ok(proto::SlotState::Revealed), None) => {
                return fail(format!("grid {index} slot {pos} is revealed and lacks a value"));
            }
            (Ok(proto::SlotState::Hidden | proto::SlotState::Removed), Some(_)) => {
                return fail(format!(
                    "grid {index} slot {pos} is not revealed and has a value: only revealed slots carry one"
                ));
            }
            _ => {
                return fail(format!(
                    "grid {index} slot {pos} has state {}: expected hidden, revealed or removed",
                    slot.state
                ));
            }
        };
    }
    Ok(Grid { slots })
}

fn decision_kind(value: i32) -> Result<DecisionKind, ProtocolError> {
    match proto::DecisionKind::try_from(value) {
        Ok(proto::DecisionKind::OpeningReveal) => Ok(DecisionKind::OpeningReveal),
        Ok(proto::DecisionKind::DrawOrTake) => Ok(DecisionKind::DrawOrTake),
        Ok(proto::DecisionKind::SwapOrReveal) => Ok(DecisionKind::SwapOrReveal),
        Ok(proto::DecisionKind::SwapAfterTake) => Ok(DecisionKind::SwapAfterTake),
        _ => fail(format!("view.decision is {value}: expected one of the four DecisionKind values")),
    }
}

/// The [`View`] a request asks about, in the game `start` began (its players, rules and time control).
pub fn view_from_proto(request: &proto::DecisionRequest, start: &GameStart) -> Result<View, ProtocolError> {
    let rid = request.request_id;
    let Some(msg) = request.view.as_ref() else { return fail(format!("decision request {rid} has no view")) };
    let legal_actions = request.legal_actions.iter().map(action_from_proto).collect::<Result<Vec<_>, _>>()?;
    if legal_actions.is_empty() {
        return fail(format!("decision request {rid} lists no legal actions"));
    }
    let grids =
        msg.grids.iter().enumerate().map(|(i, grid)| grid_from_proto(grid, i)).collect::<Result<Vec<_>, _>>()?;
    let n = grids.len();
    if n != start.players.len() {
        return fail(format!("view has {n} grids for {} players", start.players.len()));
    }
    if msg.seat as usize >= n {
        return fail(format!("view.seat {} is not a seat of this {n}-player game", msg.seat));
    }
    if msg.totals.len() != n {
        return fail(format!("view has {} totals for {n} players", msg.totals.len()));
    }
    Ok(View {
        game_id: request.game_id.clone(),
        request_id: rid,
        seat: msg.seat as usize,
        players: start.players.clone(),
        rules: start.rules.clone(),
        time_control: start.time_control,
        round: msg.round,
        decision: decision_kind(msg.decision)?,
        grids,
        discard_pile: msg.discard_pile.clone(),
        draw_pile_size: msg.draw_pile_size,
        hand: msg.hand,
        totals: msg.totals.clone(),
        round_scores: msg.round_scores.iter().map(|scores| scores.values.clone()).collect(),
        finisher: msg.finisher.map(|seat| seat as usize),
        starter: msg.starter.map(|seat| seat as usize),
        legal_actions,
        time_left: Duration::from_millis(u64::from(request.time_left_ms)),
    })
}

/// One event, as the bot sees it (unknown kinds are kept, as [`EventKind::Other`]).
pub fn event_from_proto(msg: &proto::Event) -> Event {
    Event {
        game_id: msg.game_id.clone(),
        kind: EventKind::from_word(&msg.kind),
        seat: msg.seat.map(|seat| seat as usize),
        pos: msg.pos.map(|pos| pos as usize),
        value: msg.value,
        replaced: msg.replaced,
        round: msg.round,
    }
}

/// The end of a round.
pub fn round_result_from_proto(msg: &proto::RoundResult) -> RoundResult {
    RoundResult {
        game_id: msg.game_id.clone(),
        round: msg.round,
        finisher: msg.finisher as usize,
        raw: msg.raw.clone(),
        scores: msg.scores.clone(),
        totals: msg.totals.clone(),
    }
}

/// The end of a game.
pub fn game_over_from_proto(msg: &proto::GameOver) -> GameResult {
    GameResult {
        game_id: msg.game_id.clone(),
        totals: msg.totals.clone(),
        ranks: msg.ranks.clone(),
        winners: msg.winners.iter().map(|&seat| seat as usize).collect(),
        forfeits: msg.forfeits.iter().map(|&seat| seat as usize).collect(),
    }
}

/// A strike (an unreadable `played` action reads as none).
pub fn strike_from_proto(msg: &proto::Strike) -> Strike {
    Strike {
        game_id: msg.game_id.clone(),
        request_id: msg.request_id,
        reason: msg.reason.clone(),
        detail: msg.detail.clone(),
        played: msg.played.as_ref().and_then(|action| action_from_proto(action).ok()),
        strikes: msg.strikes,
        max_strikes: msg.max_strikes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_chooses_by_index_when_it_can() {
        let legal = [Action::Draw, Action::Take];
        assert_eq!(reply(7, Action::Take, &legal).choice, Some(proto::decision_reply::Choice::Index(1)));
        let spelled = reply(7, Action::swap(3), &legal).choice;
        assert_eq!(spelled, Some(proto::decision_reply::Choice::Action(action_to_proto(Action::Swap(3)))));
    }

    #[test]
    fn error_replies_are_cut_to_500_characters() {
        let long = "é".repeat(800);
        let Some(proto::decision_reply::Choice::Error(text)) = error_reply(1, &long).choice else { panic!() };
        assert_eq!(text.chars().count(), 500);
    }

    #[test]
    fn actions_round_trip_and_bad_ones_are_named() {
        for action in [Action::Reveal(0), Action::Draw, Action::Take, Action::Swap(11)] {
            assert_eq!(action_from_proto(&action_to_proto(action)), Ok(action));
        }
        let no_pos = proto::Action { kind: proto::ActionKind::Swap as i32, pos: None };
        assert!(action_from_proto(&no_pos).unwrap_err().0.contains("swap without a position"));
        let unknown = proto::Action { kind: 9, pos: None };
        assert!(action_from_proto(&unknown).unwrap_err().0.contains("action kind 9 is not an action"));
    }

    #[test]
    fn options_without_a_preset_name_leave_the_rules_unnamed() {
        let msg = proto::Rules { column_clear: Some(false), ..Default::default() };
        let rules = rules_from_proto(Some(&msg));
        assert_eq!((rules.preset, rules.column_clear), (None, false));
        let french = proto::Rules { preset: "french".into(), ..Default::default() };
        assert_eq!(rules_from_proto(Some(&french)), Rules::preset("french").unwrap());
    }
}
