//! A bot whose first decision fails (for the tests): `FAULT=error` returns an error, `FAULT=panic` panics,
//! `FAULT=hang` never returns (it says so on stderr first), `FAULT=oom` asks for 4 GiB (under a memory limit
//! Rust then prints `memory allocation of N bytes failed` and aborts). Every later decision plays the first legal action.

use skyjo_bot::{Action, Bot, BoxError, View};

struct Faulty {
    fault: String,
    decided: u32,
}

impl Bot for Faulty {
    fn decide(&mut self, view: &View) -> Result<Action, BoxError> {
        self.decided += 1;
        if self.decided == 1 {
            match self.fault.as_str() {
                "panic" => panic!("on purpose"),
                "oom" => {
                    let hoard: Vec<u8> = Vec::with_capacity(4 << 30);
                    std::hint::black_box(&hoard);
                }
                "hang" => {
                    eprintln!("deciding forever");
                    loop {
                        std::thread::park(); // a decide that never returns
                    }
                }
                _ => return Err("no idea what to do: the bot gave up".into()),
            }
        }
        Ok(view.legal_actions[0])
    }
}

fn main() {
    skyjo_bot::run(Faulty { fault: std::env::var("FAULT").unwrap_or_default(), decided: 0 })
}
