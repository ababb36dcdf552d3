// Command firstlegal is the SDK's counterpart of cmd/bare for benchmarks/bench_sdk_go.py: the same choice
// (the first legal action) through skyjo.Main, so the two differ only by what the SDK does.
package main

import "skyjo-ref/skyjo"

func main() {
	skyjo.Main(skyjo.BotFunc(func(view *skyjo.View) (skyjo.Action, error) {
		return view.LegalActions[0], nil
	}), skyjo.WithName("firstlegal"))
}
