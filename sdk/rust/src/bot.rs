//! The bot interface: one method that receives a view and returns an action, and optional hooks.

use crate::types::{Action, Event, GameResult, GameStart, RoundResult, Strike, View};

/// Any error a bot's `decide` returns: `?` works on every error type, and `Err("why".into())` on a text.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A Skyjo bot: implement [`Bot::decide`]; the other methods have defaults.
///
/// The SDK calls a bot for one game at a time, in order, on the thread that called
/// [`run`](crate::run): `on_game_start`, then `on_event`s, `decide`s and `on_round_result`s as the game
/// goes, then `on_game_over`. The bot needs not be `Send`: it never leaves that thread.
///
/// If `decide` returns an error or panics, the SDK logs it and replies with its text: the referee
/// strikes the seat, plays its default action, records the text, and the game goes on.
pub trait Bot {
    /// Choose one of `view.legal_actions`.
    fn decide(&mut self, view: &View) -> Result<Action, BoxError>;

    /// The name sent in Hello (informational: the seat's name comes from the match). Default: the type's name.
    fn name(&self) -> String {
        let full = std::any::type_name::<Self>();
        let base = full.split('<').next().unwrap_or(full);
        base.rsplit("::").next().unwrap_or(base).to_string()
    }

    /// Your version, sent in Hello and kept in every game record (`meta.bots`). Default: empty.
    fn version(&self) -> String {
        String::new()
    }

    /// A game begins: your seat, the players, the rules and the time control.
    fn on_game_start(&mut self, _start: &GameStart) {}

    /// Something public happened at the table (before the decision that follows it).
    fn on_event(&mut self, _event: &Event) {}

    /// A round ended.
    fn on_round_result(&mut self, _result: &RoundResult) {}

    /// The game ended.
    fn on_game_over(&mut self, _result: &GameResult) {}

    /// The referee played for you: your answer (or silence) was at fault. The SDK logs it too.
    fn on_strike(&mut self, _strike: &Strike) {}
}

/// A bot made of one function (see [`bot_fn`]).
pub struct FnBot<F> {
    name: String,
    decide: F,
}

/// A bot made of a function `|view| -> Result<Action, BoxError>` and a name.
///
/// ```no_run
/// use skyjo_bot::{bot_fn, Action, View};
/// skyjo_bot::run(bot_fn("drawer", |view: &View| Ok(if view.is_legal(Action::Draw) { Action::Draw } else { view.legal_actions[0] })));
/// ```
pub fn bot_fn<F>(name: &str, decide: F) -> FnBot<F>
where
    F: FnMut(&View) -> Result<Action, BoxError>,
{
    FnBot { name: name.to_string(), decide }
}

impl<F> Bot for FnBot<F>
where
    F: FnMut(&View) -> Result<Action, BoxError>,
{
    fn decide(&mut self, view: &View) -> Result<Action, BoxError> {
        (self.decide)(view)
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Lowcards<T>(T);

    impl<T> Bot for Lowcards<T> {
        fn decide(&mut self, view: &View) -> Result<Action, BoxError> {
            Ok(view.legal_actions[0])
        }
    }

    #[test]
    fn the_default_name_is_the_type_name() {
        assert_eq!(Lowcards(1u8).name(), "Lowcards");
        assert_eq!(bot_fn("drawer", |_| Ok(Action::Draw)).name(), "drawer");
    }
}
