//! The template bot as an SDK example (for benchmarks/bench_sdk_rust.py): the template's strategy file,
//! played through `skyjo_bot::run`.

#[path = "../template/src/strategy.rs"]
mod strategy;

use skyjo_bot::{Action, Bot, BoxError, View};

struct Reference;

impl Bot for Reference {
    fn decide(&mut self, view: &View) -> Result<Action, BoxError> {
        Ok(strategy::decide(view))
    }
}

fn main() {
    skyjo_bot::run(Reference)
}
