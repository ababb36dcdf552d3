//! The conformance vectors (the repository's `conformance/`, see its README): every recorded request is
//! decoded, read into a typed `View` that must equal the expected view, and answered by the template's
//! strategy (`template/src/strategy.rs`, the very file a new bot starts from) with the reference answer.

#[path = "../template/src/strategy.rs"]
mod strategy;

use std::path::PathBuf;

use base64::Engine as _;
use prost::Message as _;
use serde_json::{Value, json};
use skyjo_bot::convert::{game_start_from_proto, view_from_proto};
use skyjo_bot::proto::{self, play_response};
use skyjo_bot::{Action, GameStart, Slot, View};

fn conformance() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../conformance")
}

fn load(path: PathBuf) -> Value {
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let data: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(data["format"], "skyjo-conformance/1", "{}", path.display());
    data
}

fn message(base64: &Value) -> play_response::Message {
    let bytes = base64::engine::general_purpose::STANDARD.decode(base64.as_str().unwrap()).unwrap();
    proto::PlayResponse::decode(bytes.as_slice()).unwrap().message.expect("a PlayResponse with a message")
}

fn game_start(base64: &Value) -> GameStart {
    match message(base64) {
        play_response::Message::GameStart(start) => game_start_from_proto(&start).unwrap(),
        other => panic!("expected a game_start, got {other:?}"),
    }
}

fn view(base64: &Value, start: &GameStart) -> View {
    match message(base64) {
        play_response::Message::Decision(request) => view_from_proto(&request, start).unwrap(),
        other => panic!("expected a decision, got {other:?}"),
    }
}

/// The view in the vectors' JSON form (the Python SDK's names).
fn view_json(view: &View) -> Value {
    let grids: Vec<Value> = view
        .grids
        .iter()
        .map(|grid| {
            json!({
                "states": grid.slots.iter().map(|slot| slot.state().as_str()).collect::<Vec<_>>(),
                "values": grid.slots.iter().map(|slot| match slot { Slot::Revealed(v) => json!(v), _ => Value::Null }).collect::<Vec<_>>(),
            })
        })
        .collect();
    let rules = &view.rules;
    let tc = view.time_control.expect("the vectors' GameStarts carry a time control");
    json!({
        "game_id": view.game_id,
        "request_id": view.request_id,
        "seat": view.seat,
        "players": view.players,
        "num_players": view.num_players(),
        "rules": {
            "preset": rules.preset,
            "column_clear": rules.column_clear,
            "clear_on_final_reveal": rules.clear_on_final_reveal,
            "finisher_penalty": rules.finisher_penalty.as_str(),
            "next_round_starter": rules.next_round_starter.as_str(),
            "end_score": rules.end_score,
            "final_tie": rules.final_tie.as_str(),
        },
        "time_control": {
            "decision_ms": tc.decision_ms, "bank_ms": tc.bank_ms, "max_strikes": tc.max_strikes, "grace_ms": tc.grace_ms,
        },
        "round": view.round,
        "decision": view.decision.as_str(),
        "grids": grids,
        "discard_pile": view.discard_pile,
        "discard_top": view.discard_top(),
        "draw_pile_size": view.draw_pile_size,
        "hand": view.hand,
        "totals": view.totals,
        "round_scores": view.round_scores,
        "finisher": view.finisher,
        "starter": view.starter,
        "legal_actions": view.legal_actions.iter().map(Action::to_string).collect::<Vec<_>>(),
        "time_left_ms": view.time_left.as_millis() as u64,
    })
}

#[test]
fn every_vector_reads_as_its_view_and_gets_the_reference_answer() {
    let data = load(conformance().join("views.json"));
    let vectors = data["vectors"].as_array().unwrap();
    assert!(vectors.len() >= 20, "only {} vectors", vectors.len());
    for vector in vectors {
        let name = vector["name"].as_str().unwrap();
        let view = view(&vector["request"], &game_start(&vector["game_start"]));
        let got = view_json(&view);
        let expected = &vector["view"];
        for (key, value) in expected.as_object().unwrap() {
            assert_eq!(&got[key], value, "{name}: view.{key}");
        }
        assert_eq!(got.as_object().unwrap().len(), expected.as_object().unwrap().len(), "{name}: the view's keys");
        let answer = strategy::decide(&view);
        assert_eq!(answer.to_string(), vector["reference"].as_str().unwrap(), "{name}: the reference answer");
        assert!(view.is_legal(answer), "{name}: {answer} is not legal");
    }
}

#[test]
fn every_seeded_match_gets_the_reference_moves() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(conformance().join("matches"))
        .expect("conformance/matches")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 3, "{files:?}");
    for file in files {
        let data = load(file.clone());
        let start = game_start(&data["game_start"]);
        let decisions = data["decisions"].as_array().unwrap();
        assert!(!decisions.is_empty(), "{}", file.display());
        for (index, decision) in decisions.iter().enumerate() {
            let view = view(&decision["request"], &start);
            let answer = strategy::decide(&view).to_string();
            assert_eq!(answer, decision["reference"].as_str().unwrap(), "{}: decision {index}", file.display());
        }
    }
}
