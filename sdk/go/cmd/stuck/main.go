// Command stuck is a test bot whose Decide never returns: SIGTERM, SIGINT and the parent's death must still
// end it promptly with exit 0 (the SDK's stop deadline). tests/test_sdk_go.py runs it.
package main

import (
	"fmt"
	"os"

	"skyjo-ref/skyjo"
)

func main() {
	skyjo.Main(skyjo.BotFunc(func(view *skyjo.View) (skyjo.Action, error) {
		fmt.Fprintln(os.Stderr, "deciding for ever")
		select {} // blocks the client's goroutine for good
	}), skyjo.WithName("stuck"))
}
