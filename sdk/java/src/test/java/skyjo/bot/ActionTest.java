package skyjo.bot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ActionTest {
    @Test
    void constructorsAndTextForm() {
        assertEquals("swap 3", Action.swap(3).toString());
        assertEquals("reveal 11", Action.reveal(11).toString());
        assertEquals("draw", Action.draw().toString());
        assertEquals("take", Action.take().toString());
        assertEquals(Action.swap(3), Action.parse("swap 3"));
        assertEquals(Action.reveal(0), Action.parse("  REVEAL   0 "));
        assertEquals(Action.draw(), Action.parse("draw"));
        assertEquals(Action.take(), new Action(ActionKind.TAKE, Action.NO_POSITION));
        assertFalse(Action.draw().hasPosition());
        assertTrue(Action.swap(0).hasPosition());
    }

    @Test
    void refusesWhatSpellsNoAction() {
        assertThrows(InvalidActionException.class, () -> Action.swap(12));
        assertThrows(InvalidActionException.class, () -> Action.reveal(-1));
        assertThrows(InvalidActionException.class, () -> new Action(ActionKind.DRAW, 3));
        assertThrows(InvalidActionException.class, () -> Action.parse("swap"));
        assertThrows(InvalidActionException.class, () -> Action.parse("swap x"));
        assertThrows(InvalidActionException.class, () -> Action.parse("fly 3"));
        assertThrows(InvalidActionException.class, () -> Action.parse(""));
        assertThrows(InvalidActionException.class, () -> Action.parse("swap 1 2"));
        InvalidActionException e = assertThrows(InvalidActionException.class, () -> Action.parse("fly"));
        assertEquals("unknown action 'fly': expected one of reveal, draw, take, swap", e.getMessage());
    }

    @Test
    void addressesAreCheckedLikeThePythonSdk() {
        assertEquals("/tmp/r.sock", Endpoint.parse("unix:/tmp/r.sock").socketPath());
        assertEquals("/tmp/r.sock", Endpoint.parse("unix:///tmp/r.sock").socketPath());
        assertEquals("rel.sock", Endpoint.parse("unix:rel.sock").socketPath());
        Endpoint v6 = Endpoint.parse("[::1]:50051");
        assertEquals("::1", v6.host());
        assertEquals(50051, v6.port());
        assertEquals("localhost", Endpoint.parse("grpc://localhost:1").host());
        assertThrows(IllegalArgumentException.class, () -> Endpoint.parse("localhost"));
        assertThrows(IllegalArgumentException.class, () -> Endpoint.parse("localhost:70000"));
        assertThrows(IllegalArgumentException.class, () -> Endpoint.parse("unix:"));
    }
}
