package skyjo_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"

	"skyjo-ref/skyjo"
	pb "skyjo-ref/skyjo/skyjov1"
)

// vectorsDir is the repository's conformance/ folder (conformance/README.md describes the format).
const vectorsDir = "../../conformance"

func readJSON(t *testing.T, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		t.Skipf("%s not found: the conformance vectors are in the skyjo-ref repository", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func message(t *testing.T, text string) *pb.PlayResponse {
	t.Helper()
	data, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		t.Fatal(err)
	}
	msg := &pb.PlayResponse{}
	if err := proto.Unmarshal(data, msg); err != nil {
		t.Fatal(err)
	}
	return msg
}

func readView(t *testing.T, startB64, requestB64 string) *skyjo.View {
	t.Helper()
	start, err := skyjo.GameStartFromProto(message(t, startB64).GetGameStart())
	if err != nil {
		t.Fatal(err)
	}
	view, err := skyjo.ViewFromProto(message(t, requestB64).GetDecision(), start)
	if err != nil {
		t.Fatal(err)
	}
	return view
}

func optional(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// viewJSON is the SDK's View in the vectors' JSON form.
func viewJSON(v *skyjo.View) map[string]any {
	grids := make([]any, len(v.Grids))
	for i := range v.Grids {
		states, values := make([]any, skyjo.GridSize), make([]any, skyjo.GridSize)
		for pos := range v.Grids[i] {
			states[pos] = string(v.Grids[i][pos].State)
			if value, ok := v.Grids[i].Value(pos); ok {
				values[pos] = value
			}
		}
		grids[i] = map[string]any{"states": states, "values": values}
	}
	legal := make([]string, len(v.LegalActions))
	for i, a := range v.LegalActions {
		legal[i] = a.String()
	}
	top, ok := v.DiscardTop()
	var discardTop any
	if ok {
		discardTop = top
	}
	r := v.Rules
	return map[string]any{
		"game_id": v.GameID, "request_id": v.RequestID, "seat": v.Seat, "players": v.Players,
		"num_players": v.NumPlayers(),
		"rules": map[string]any{
			"preset": r.Preset, "column_clear": r.ColumnClear, "clear_on_final_reveal": r.ClearOnFinalReveal,
			"finisher_penalty": r.FinisherPenalty, "next_round_starter": r.NextRoundStarter,
			"end_score": r.EndScore, "final_tie": r.FinalTie,
		},
		"time_control": map[string]any{
			"decision_ms": v.TimeControl.DecisionMS, "bank_ms": v.TimeControl.BankMS,
			"max_strikes": v.TimeControl.MaxStrikes, "grace_ms": v.TimeControl.GraceMS,
		},
		"round": v.Round, "decision": v.Decision, "grids": grids, "discard_pile": v.DiscardPile,
		"discard_top": discardTop, "draw_pile_size": v.DrawPileSize, "hand": optional(v.Hand),
		"totals": v.Totals, "round_scores": v.RoundScores, "finisher": optional(v.Finisher),
		"starter": optional(v.Starter), "legal_actions": legal, "time_left_ms": v.TimeLeft.Milliseconds(),
	}
}

// normalized is value as JSON reads it back (numbers as float64, slices as []any).
func normalized(t *testing.T, value any) any {
	data, err := json.Marshal(value)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestConformanceViews(t *testing.T) {
	var file struct {
		Format  string
		Vectors []struct {
			Name, Request, Reference string
			GameStart                string `json:"game_start"`
			View                     map[string]any
		}
	}
	readJSON(t, filepath.Join(vectorsDir, "views.json"), &file)
	if file.Format != "skyjo-conformance/1" || len(file.Vectors) == 0 {
		t.Fatalf("views.json: format %q with %d vectors", file.Format, len(file.Vectors))
	}
	for _, vector := range file.Vectors {
		view := readView(t, vector.GameStart, vector.Request)
		got, want := normalized(t, viewJSON(view)), normalized(t, vector.View)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the view read\n%v\nexpected\n%v", vector.Name, got, want)
		}
		action, err := reference(view)
		if err != nil || action.String() != vector.Reference {
			t.Errorf("%s: the reference strategy plays %v (%v), expected %s", vector.Name, action, err, vector.Reference)
		}
		if parsed, err := skyjo.ParseAction(vector.Reference); err != nil || parsed != action {
			t.Errorf("%s: ParseAction(%q) = %v, %v", vector.Name, vector.Reference, parsed, err)
		}
	}
	t.Logf("%d view vectors read and played", len(file.Vectors))
}

func TestConformanceMatches(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join(vectorsDir, "matches", "*.json"))
	if len(paths) == 0 {
		t.Skipf("no %s/matches/*.json: the conformance vectors are in the skyjo-ref repository", vectorsDir)
	}
	decisions := 0
	for _, path := range paths {
		var match struct {
			GameStart string `json:"game_start"`
			Decisions []struct{ Request, Reference string }
		}
		readJSON(t, path, &match)
		if len(match.Decisions) == 0 {
			t.Fatalf("%s: no decisions", path)
		}
		for i, decision := range match.Decisions {
			action, err := reference(readView(t, match.GameStart, decision.Request))
			if err != nil || action.String() != decision.Reference {
				t.Fatalf("%s decision %d: the reference strategy plays %v (%v), expected %s", path, i, action, err, decision.Reference)
			}
			decisions++
		}
	}
	t.Logf("%d matches, %d decisions played as the Python reference does", len(paths), decisions)
}
