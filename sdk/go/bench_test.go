package skyjo_test

import (
	"encoding/json"
	"os"
	"testing"

	"skyjo-ref/skyjo"
)

// BenchmarkReadView is the SDK's own work for one decision: the GameStart-known typed View read from a
// recorded mid-game DecisionRequest (2 players), and the reference strategy's answer.
func BenchmarkReadView(b *testing.B) {
	var file struct {
		Vectors []struct {
			GameStart string `json:"game_start"`
			Request   string
			View      map[string]any
		}
	}
	data, err := os.ReadFile(vectorsDir + "/views.json")
	if err != nil {
		b.Skip("no conformance vectors")
	}
	if err := json.Unmarshal(data, &file); err != nil {
		b.Fatal(err)
	}
	t := &testing.T{}
	for _, v := range file.Vectors {
		if v.View["decision"] == "swap_or_reveal" && v.View["num_players"] == 2.0 {
			start, _ := skyjo.GameStartFromProto(message(t, v.GameStart).GetGameStart())
			request := message(t, v.Request).GetDecision()
			b.ResetTimer()
			for range b.N {
				view, err := skyjo.ViewFromProto(request, start)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := reference(view); err != nil {
					b.Fatal(err)
				}
			}
			return
		}
	}
}
