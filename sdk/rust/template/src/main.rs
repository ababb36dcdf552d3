//! __BOT_NAME__: a Skyjo bot for the skyjo-ref referee, on the Rust SDK (skyjo-sdk/).
//!
//! `./build` builds it (target/release/bot); the referee starts it with SKYJO_ADDR and SKYJO_TOKEN set.
//! Your strategy goes in src/strategy.rs; the other hooks of `Bot` (on_game_start, on_event, on_round_result,
//! on_game_over, on_strike) are there when you want to remember what happened.

mod strategy;

use skyjo_bot::{Action, Bot, BoxError, View};

struct MyBot;

impl Bot for MyBot {
    fn name(&self) -> String {
        "__BOT_NAME__".into()
    }

    fn version(&self) -> String {
        env!("CARGO_PKG_VERSION").into() // kept in every game record: bump it when the strategy changes
    }

    fn decide(&mut self, view: &View) -> Result<Action, BoxError> {
        Ok(strategy::decide(view))
    }
}

fn main() {
    skyjo_bot::run(MyBot)
}
