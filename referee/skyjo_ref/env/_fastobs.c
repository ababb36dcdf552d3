/* skyjo_ref.env._fastobs: TableEncoder's catch-up and SkyjoEnv.observe's hot path, compiled (optional).
 *
 * The same arithmetic as TableEncoder._catch_up (with _round_event), _resync and _write_seats in encoding.py
 * (the reference: SKYJO_ENV_PURE_PYTHON=1 runs it, and tests compare both paths at every step), written against
 * the plain CPython C API (no numpy C API, so numpy is not a build dependency). The float32 buffer is reached
 * through the buffer protocol of the encoder's memoryview; every index taken from an event or the game is
 * checked, and a bad one raises ValueError before anything is written for that event. Like the Python
 * code it reads only what the table shows: a slot's value only where the slot is revealed, the card in
 * hand only after the due seat's draw (the buffer holds the due seat's table; observe() hands other seats
 * back to Python, which takes the turn and the hand out). The GIL is held throughout.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* the layout of encoding.py (TABLE_FIELDS, SEAT_FIELDS, GRID_FIELDS) */
#define TABLE_SIZE 34
#define SEAT_SIZE 3
#define GRID_SIZE 12
#define GRID_BLOCK 38
#define HIDDEN_COUNT_AT 36
#define REVEALED_SUM_AT 37
#define UNSEEN_BASE 15 /* the unseen count of value v is at UNSEEN_BASE + v */
#define MIN_VALUE (-2)
#define MAX_VALUE 12
#define DECISION_OPENING_REVEAL 0
#define DECISION_DRAW_OR_TAKE 1
#define DECISION_SWAP_OR_REVEAL 2
#define DECISION_SWAP_AFTER_TAKE 3
#define HAS_HAND 5
#define HAND 6
#define HAS_DISCARD 7
#define DISCARD_TOP 8
#define DRAW_SIZE 9
#define DISCARD_SIZE 10
#define ROUND 11
#define FINISHING 12
#define MY_TURN 4
#define UNSEEN_AT 13
#define NUM_VALUES 15
#define ENGINE_HIDDEN 0 /* the engine's slot states (skyjo_ref.rules.engine): plain ints */
#define ENGINE_REVEALED 1
#define ENGINE_REMOVED 2

/* what the catch-up found (NEEDS_NEW_EVENTS: game.events is not a list, for Python to report) */
#define NEEDS_RESYNC 1
#define NEEDS_SEATS 2
#define NEEDS_NEW_EVENTS 4

/* the EventKind members, set once by configure() (strong references, kept for the process's life) */
static PyObject *ev_swap, *ev_draw, *ev_take, *ev_reveal, *ev_final_reveal, *ev_discard, *ev_column_cleared,
    *ev_turns_start, *ev_round_finishing, *ev_resync_kinds;
static PyObject *decisions;     /* the DecisionKind members in the one-hot's order (a tuple) */
static float deck[NUM_VALUES]; /* how many cards of each value -2..12 the deck holds */
static PyObject *str_hand, *str_discard, *str_events, *str_seat, *str_over, *str_legal_actions, *str_copy,
    *str_observation, *str_action_mask, *str_finish_sync, *str_totals, *str_finisher, *str_starter, *str_decision,
    *str_states, *str_values, *str_draw_pile, *str_rounds;

static PyObject *
fastobs_configure(PyObject *module, PyObject *args)
{
    PyObject *kinds[12];
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOO!O!:configure", &kinds[0], &kinds[1], &kinds[2], &kinds[3], &kinds[4],
                          &kinds[5], &kinds[6], &kinds[7], &kinds[8], &kinds[9], &PyTuple_Type, &kinds[10],
                          &PyTuple_Type, &kinds[11])) {
        return NULL;
    }
    if (PyTuple_GET_SIZE(kinds[10]) != 4 || PyTuple_GET_SIZE(kinds[11]) != NUM_VALUES) {
        PyErr_SetString(PyExc_ValueError, "configure: 4 decisions and 15 deck counts expected");
        return NULL;
    }
    float counts[NUM_VALUES];
    for (Py_ssize_t v = 0; v < NUM_VALUES; v++) {
        double count = PyFloat_AsDouble(PyTuple_GET_ITEM(kinds[11], v));
        if (count == -1.0 && PyErr_Occurred()) {
            return NULL;
        }
        counts[v] = (float)count;
    }
    memcpy(deck, counts, sizeof(deck));
    Py_INCREF(kinds[10]);
    Py_XSETREF(decisions, kinds[10]);
    if (!PyAnySet_Check(kinds[9])) {
        PyErr_SetString(PyExc_TypeError, "configure: the last argument must be the set of resync kinds");
        return NULL;
    }
    PyObject **slots[10] = {&ev_swap,    &ev_draw,           &ev_take,        &ev_reveal,          &ev_final_reveal,
                            &ev_discard, &ev_column_cleared, &ev_turns_start, &ev_round_finishing, &ev_resync_kinds};
    for (int i = 0; i < 10; i++) {
        Py_INCREF(kinds[i]);
        Py_XSETREF(*slots[i], kinds[i]);
    }
    Py_RETURN_NONE;
}

/* event[index] as a C long in [low, high], or -1 with ValueError set (the event names its kind) */
static int
event_int(PyObject *event, Py_ssize_t index, long low, long high, const char *what, long *out)
{
    if (PyTuple_GET_SIZE(event) <= index) {
        PyErr_Format(PyExc_ValueError, "event %R has no %s field", event, what);
        return -1;
    }
    PyObject *item = PyTuple_GET_ITEM(event, index);
    if (!PyLong_Check(item)) {
        PyErr_Format(PyExc_ValueError, "event %R: %s must be an int", event, what);
        return -1;
    }
    int overflow = 0;
    long value = PyLong_AsLongAndOverflow(item, &overflow);
    if (value == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (overflow || value < low || value > high) {
        PyErr_Format(PyExc_ValueError, "event %R: %s must be from %ld to %ld", event, what, low, high);
        return -1;
    }
    *out = value;
    return 0;
}

/* an attribute of the game that must be a card value (-2..12): 0 and *out set, or -1 with an error set */
static int
card_value(PyObject *obj, const char *what, long *out)
{
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_ValueError, "%s must be a card value, got %R", what, obj);
        return -1;
    }
    int overflow = 0;
    long value = PyLong_AsLongAndOverflow(obj, &overflow);
    if (value == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (overflow || value < MIN_VALUE || value > MAX_VALUE) {
        PyErr_Format(PyExc_ValueError, "%s must be a card value from -2 to 12, got %R", what, obj);
        return -1;
    }
    *out = value;
    return 0;
}

/* Table(buffer): the compiled state of one TableEncoder.
 *
 * buffer is the encoder's writable float32 memoryview (format "f", 34 + 41n floats); the Table holds it
 * exported for its whole life. events, seen and held are what the Python encoder keeps in pure Python: the
 * game's events list read so far, how many of its events are applied, the card in hand the buffer shows.
 */
typedef struct {
    PyObject_HEAD
    Py_buffer view;
    int has_view;
    long players;
    Py_ssize_t grid_start;
    PyObject *events; /* a strong reference (None until the first resync) */
    Py_ssize_t seen;
    int has_held;
    long held;
    /* set by set_observe(): what observe() needs (strong references, or NULL) */
    PyObject *stages;       /* a tuple: per seat, a numpy array in its order (seat 0's: the buffer's own) */
    Py_buffer *stage_views; /* the stages' buffers, seats 1 to n-1 (entry 0 unused) */
    Py_ssize_t stage_count; /* how many stage_views are held (seats 1 to stage_count-1) */
    PyObject *masks;        /* a dict: id(legal tuple) -> its action mask */
} TableObject;

/* apply events[self->seen:] to the buffer; the flags, or -1 with an exception set */
static int
table_apply(TableObject *self, PyObject *events, PyObject *game)
{
    float *mv = (float *)self->view.buf;
    const long players = self->players;
    const Py_ssize_t grid_start = self->grid_start;
    Py_ssize_t end = PyList_GET_SIZE(events);
    int has_held = self->has_held;
    long held = self->held;
    int drawn = 0; /* a card was drawn and not placed yet */
    int flags = 0;
    long seat, pos, value, old;

    for (Py_ssize_t i = self->seen; i < end && i < PyList_GET_SIZE(events); i++) {
        PyObject *event = PyList_GET_ITEM(events, i); /* borrowed: no Python code runs while it is used */
        if (!PyTuple_Check(event) || PyTuple_GET_SIZE(event) < 1) {
            PyErr_Format(PyExc_ValueError, "event %zd is not an Event tuple", i);
            return -1;
        }
        PyObject *kind = PyTuple_GET_ITEM(event, 0);
        if (kind == ev_swap) {
            if (event_int(event, 1, 0, players - 1, "seat", &seat) < 0 ||
                event_int(event, 2, 0, GRID_SIZE - 1, "pos", &pos) < 0 ||
                event_int(event, 3, MIN_VALUE, MAX_VALUE, "value", &value) < 0 ||
                event_int(event, 4, MIN_VALUE, MAX_VALUE, "replaced", &old) < 0) {
                return -1;
            }
            Py_ssize_t at = grid_start + seat * GRID_BLOCK;
            Py_ssize_t p = at + 3 * pos;
            if (mv[p] != 0.0f) { /* a hidden card leaves for the discard pile: now seen */
                mv[p] = 0.0f;
                mv[at + HIDDEN_COUNT_AT] -= 1.0f;
                mv[UNSEEN_BASE + old] -= 1.0f;
                mv[at + REVEALED_SUM_AT] += (float)value;
            }
            else { /* a revealed card moves to the discard pile: still seen */
                mv[at + REVEALED_SUM_AT] += (float)(value - old);
            }
            mv[p + 2] = (float)value;
            if (has_held && held == value) { /* the card in hand goes to the grid: counted as seen already */
                has_held = 0;
            }
            else {
                mv[UNSEEN_BASE + value] -= 1.0f;
            }
            drawn = 0;
            mv[HAS_HAND] = 0.0f;
            mv[HAND] = 0.0f;
            mv[HAS_DISCARD] = 1.0f;
            mv[DISCARD_TOP] = (float)old;
            mv[DISCARD_SIZE] += 1.0f;
            mv[DECISION_DRAW_OR_TAKE] = 1.0f; /* the next turn's decision */
            mv[DECISION_SWAP_OR_REVEAL] = 0.0f;
            mv[DECISION_SWAP_AFTER_TAKE] = 0.0f;
        }
        else if (kind == ev_draw) {
            mv[DRAW_SIZE] -= 1.0f;
            mv[DECISION_DRAW_OR_TAKE] = 0.0f;
            mv[DECISION_SWAP_OR_REVEAL] = 1.0f;
            drawn = 1;
        }
        else if (kind == ev_take) {
            if (event_int(event, 3, MIN_VALUE, MAX_VALUE, "value", &value) < 0) {
                return -1;
            }
            held = value; /* from the discard pile to the due seat's hand: seen all along */
            has_held = 1;
            PyObject *discard = PyObject_GetAttr(game, str_discard); /* the pile now, as in Python */
            if (discard == NULL) {
                return -1;
            }
            if (!PyList_Check(discard)) {
                PyErr_SetString(PyExc_ValueError, "game.discard must be a list");
                Py_DECREF(discard);
                return -1;
            }
            Py_ssize_t count = PyList_GET_SIZE(discard);
            if (count > 0) {
                long top;
                if (card_value(PyList_GET_ITEM(discard, count - 1), "the top discard", &top) < 0) {
                    Py_DECREF(discard);
                    return -1;
                }
                mv[DISCARD_TOP] = (float)top;
            }
            else {
                mv[HAS_DISCARD] = 0.0f;
                mv[DISCARD_TOP] = 0.0f;
            }
            Py_DECREF(discard);
            mv[HAS_HAND] = 1.0f;
            mv[HAND] = (float)value;
            mv[DISCARD_SIZE] -= 1.0f;
            mv[DECISION_DRAW_OR_TAKE] = 0.0f;
            mv[DECISION_SWAP_AFTER_TAKE] = 1.0f;
        }
        else if (kind == ev_reveal || kind == ev_final_reveal) {
            if (event_int(event, 1, 0, players - 1, "seat", &seat) < 0 ||
                event_int(event, 2, 0, GRID_SIZE - 1, "pos", &pos) < 0 ||
                event_int(event, 3, MIN_VALUE, MAX_VALUE, "value", &value) < 0) {
                return -1;
            }
            Py_ssize_t at = grid_start + seat * GRID_BLOCK;
            Py_ssize_t p = at + 3 * pos;
            mv[p] = 0.0f;
            mv[p + 2] = (float)value;
            mv[at + HIDDEN_COUNT_AT] -= 1.0f;
            mv[at + REVEALED_SUM_AT] += (float)value;
            mv[UNSEEN_BASE + value] -= 1.0f;
        }
        else if (kind == ev_discard) {
            if (event_int(event, 3, MIN_VALUE, MAX_VALUE, "value", &value) < 0) {
                return -1;
            }
            if (has_held && held == value) { /* the drawn card goes to the discard pile: counted as seen already */
                has_held = 0;
            }
            else {
                mv[UNSEEN_BASE + value] -= 1.0f;
            }
            drawn = 0;
            mv[HAS_HAND] = 0.0f;
            mv[HAND] = 0.0f;
            mv[HAS_DISCARD] = 1.0f;
            mv[DISCARD_TOP] = (float)value;
            mv[DISCARD_SIZE] += 1.0f;
            mv[DECISION_DRAW_OR_TAKE] = 1.0f; /* a reveal follows, then the next turn */
            mv[DECISION_SWAP_OR_REVEAL] = 0.0f;
        }
        else if (kind == ev_column_cleared) {
            if (event_int(event, 1, 0, players - 1, "seat", &seat) < 0 ||
                event_int(event, 2, 0, GRID_SIZE / 3 - 1, "pos (column)", &pos) < 0 ||
                event_int(event, 3, MIN_VALUE, MAX_VALUE, "value", &value) < 0) {
                return -1;
            }
            Py_ssize_t at = grid_start + seat * GRID_BLOCK;
            Py_ssize_t p = at + 3 * pos;
            for (int row = 0; row < 3; row++) { /* the column's three slots, 4 slots of 3 floats apart */
                Py_ssize_t q = p + 12 * row;
                mv[q + 1] = 1.0f;
                mv[q + 2] = 0.0f;
            }
            mv[at + REVEALED_SUM_AT] -= (float)(3 * value);
            mv[HAS_DISCARD] = 1.0f;
            mv[DISCARD_TOP] = (float)value;
            mv[DISCARD_SIZE] += 3.0f;
        }
        else if (kind == ev_turns_start) {
            mv[DECISION_OPENING_REVEAL] = 0.0f;
            mv[DECISION_DRAW_OR_TAKE] = 1.0f;
            flags |= NEEDS_SEATS;
        }
        else if (kind == ev_round_finishing) {
            flags |= NEEDS_SEATS;
        }
        else {
            int member = PySet_Contains(ev_resync_kinds, kind);
            if (member < 0) {
                return -1;
            }
            if (member) {
                flags |= NEEDS_RESYNC;
            }
        }
    }
    if (!(flags & NEEDS_RESYNC) && drawn) { /* the due seat's card in hand: it alone sees it */
        PyObject *hand = PyObject_GetAttr(game, str_hand);
        if (hand == NULL) {
            return -1;
        }
        int bad = card_value(hand, "game.hand after a draw", &held);
        Py_DECREF(hand);
        if (bad < 0) {
            return -1;
        }
        has_held = 1;
        mv[HAS_HAND] = 1.0f;
        mv[HAND] = (float)held;
        mv[UNSEEN_BASE + held] -= 1.0f;
    }
    self->seen = end;
    self->has_held = has_held;
    self->held = held;
    return flags;
}

/* obj as a C long in [low, high] (what names it in the error), or -1 with ValueError set */
static int
bounded_long(PyObject *obj, long low, long high, const char *what, long *out)
{
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_ValueError, "%s must be an int, got %R", what, obj);
        return -1;
    }
    int overflow = 0;
    long value = PyLong_AsLongAndOverflow(obj, &overflow);
    if (value == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (overflow || value < low || value > high) {
        PyErr_Format(PyExc_ValueError, "%s must be from %ld to %ld, got %R", what, low, high, obj);
        return -1;
    }
    *out = value;
    return 0;
}

/* None -> -1, else a seat 0..players-1 (TableEncoder._write_seats' finisher and starter) */
static int
optional_seat(PyObject *game, PyObject *name, long players, long *out)
{
    PyObject *obj = PyObject_GetAttr(game, name);
    if (obj == NULL) {
        return -1;
    }
    int bad = 0;
    if (obj == Py_None) {
        *out = -1;
    }
    else {
        bad = bounded_long(obj, 0, players - 1, PyUnicode_AsUTF8(name), out);
    }
    Py_DECREF(obj);
    return bad;
}

/* TableEncoder._write_seats: the finishing flag, totals, finisher and starter flags */
static int
table_write_seats(TableObject *self, PyObject *game)
{
    float *mv = (float *)self->view.buf;
    const long players = self->players;
    long finisher, starter;
    if (optional_seat(game, str_finisher, players, &finisher) < 0 ||
        optional_seat(game, str_starter, players, &starter) < 0) {
        return -1;
    }
    PyObject *totals = PyObject_GetAttr(game, str_totals);
    if (totals == NULL) {
        return -1;
    }
    PyObject *fast = PySequence_Fast(totals, "game.totals must be a sequence");
    Py_DECREF(totals);
    if (fast == NULL) {
        return -1;
    }
    if (PySequence_Fast_GET_SIZE(fast) != players) {
        PyErr_Format(PyExc_ValueError, "game.totals must hold %ld totals", players);
        Py_DECREF(fast);
        return -1;
    }
    float values[8];
    for (long seat = 0; seat < players; seat++) {
        double total = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fast, seat)); /* as Python: int -> float */
        if (total == -1.0 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
        values[seat] = (float)total;
    }
    Py_DECREF(fast);
    mv[FINISHING] = finisher < 0 ? 0.0f : 1.0f;
    for (long seat = 0; seat < players; seat++) {
        float *at = mv + TABLE_SIZE + SEAT_SIZE * seat;
        at[0] = values[seat];
        at[1] = finisher == seat ? 1.0f : 0.0f;
        at[2] = starter == seat ? 1.0f : 0.0f;
    }
    return 0;
}

/* len(game.<name>) */
static Py_ssize_t
attr_length(PyObject *game, PyObject *name)
{
    PyObject *obj = PyObject_GetAttr(game, name);
    if (obj == NULL) {
        return -1;
    }
    Py_ssize_t length = PyObject_Length(obj);
    Py_DECREF(obj);
    return length;
}

/* TableEncoder._resync: read the whole public table again (a hidden slot's value is never read), then
 * every event of events is in the buffer; 0, or -1 with an exception set */
static int
table_resync(TableObject *self, PyObject *game, PyObject *events)
{
    float *mv = (float *)self->view.buf;
    const long players = self->players;
    float out[UNSEEN_AT] = {0.0f};
    float unseen[NUM_VALUES];
    float grids[8 * GRID_BLOCK] = {0.0f};
    int has_hand = 0;
    long hand = 0, value;
    int result = -1;
    PyObject *discard = NULL, *states = NULL, *values = NULL, *obj = NULL;

    if (players > 8) {
        PyErr_SetString(PyExc_ValueError, "at most 8 players");
        return -1;
    }
    memcpy(unseen, deck, sizeof(unseen));
    obj = PyObject_GetAttr(game, str_decision);
    if (obj == NULL) {
        goto done;
    }
    Py_ssize_t decision = 0;
    while (decision < 4 && PyTuple_GET_ITEM(decisions, decision) != obj) {
        decision++;
    }
    if (decision == 4) {
        PyErr_Format(PyExc_ValueError, "game.decision %R is no decision", obj);
        goto done;
    }
    Py_CLEAR(obj);
    out[decision] = 1.0f;
    discard = PyObject_GetAttr(game, str_discard);
    if (discard == NULL) {
        goto done;
    }
    if (!PyList_Check(discard)) {
        PyErr_SetString(PyExc_ValueError, "game.discard must be a list");
        goto done;
    }
    Py_ssize_t discards = PyList_GET_SIZE(discard);
    for (Py_ssize_t i = 0; i < discards; i++) {
        if (card_value(PyList_GET_ITEM(discard, i), "a discard", &value) < 0) {
            goto done;
        }
        unseen[value - MIN_VALUE] -= 1.0f;
    }
    obj = PyObject_GetAttr(game, str_hand); /* the due seat's card (none after a round's end or the game's) */
    if (obj == NULL) {
        goto done;
    }
    if (obj != Py_None) {
        if (card_value(obj, "game.hand", &hand) < 0) {
            goto done;
        }
        has_hand = 1;
        out[HAS_HAND] = 1.0f;
        out[HAND] = (float)hand;
        unseen[hand - MIN_VALUE] -= 1.0f;
    }
    Py_CLEAR(obj);
    states = PyObject_GetAttr(game, str_states);
    values = states == NULL ? NULL : PyObject_GetAttr(game, str_values);
    if (values == NULL) {
        goto done;
    }
    if (!PyList_Check(states) || !PyList_Check(values) || PyList_GET_SIZE(states) != players ||
        PyList_GET_SIZE(values) != players) {
        PyErr_Format(PyExc_ValueError, "game.states and game.values must be lists of %ld grids", players);
        goto done;
    }
    for (long seat = 0; seat < players; seat++) {
        PyObject *seat_states = PyList_GET_ITEM(states, seat);
        PyObject *seat_values = PyList_GET_ITEM(values, seat);
        if (!PyList_Check(seat_states) || !PyList_Check(seat_values) || PyList_GET_SIZE(seat_states) != GRID_SIZE ||
            PyList_GET_SIZE(seat_values) != GRID_SIZE) {
            PyErr_SetString(PyExc_ValueError, "each grid's states and values must be lists of 12");
            goto done;
        }
        float *block = grids + GRID_BLOCK * seat;
        long hidden = 0, total = 0, state;
        for (Py_ssize_t p = 0; p < GRID_SIZE; p++) {
            if (bounded_long(PyList_GET_ITEM(seat_states, p), ENGINE_HIDDEN, ENGINE_REMOVED, "a slot state", &state) <
                0) {
                goto done;
            }
            if (state == ENGINE_HIDDEN) {
                block[3 * p] = 1.0f;
                hidden++;
            }
            else if (state == ENGINE_REMOVED) {
                block[3 * p + 1] = 1.0f;
            }
            else { /* revealed: public */
                if (card_value(PyList_GET_ITEM(seat_values, p), "a revealed card", &value) < 0) {
                    goto done;
                }
                block[3 * p + 2] = (float)value;
                unseen[value - MIN_VALUE] -= 1.0f;
                total += value;
            }
        }
        block[HIDDEN_COUNT_AT] = (float)hidden;
        block[REVEALED_SUM_AT] = (float)total;
    }
    obj = PyObject_GetAttr(game, str_over);
    if (obj == NULL) {
        goto done;
    }
    int over = PyObject_IsTrue(obj);
    Py_CLEAR(obj);
    if (over < 0) {
        goto done;
    }
    Py_ssize_t draw_size = attr_length(game, str_draw_pile);
    Py_ssize_t rounds = draw_size < 0 ? -1 : attr_length(game, str_rounds);
    if (rounds < 0) {
        goto done;
    }
    out[MY_TURN] = over ? 0.0f : 1.0f;
    if (discards > 0) {
        out[HAS_DISCARD] = 1.0f;
        if (card_value(PyList_GET_ITEM(discard, discards - 1), "the top discard", &value) < 0) {
            goto done;
        }
        out[DISCARD_TOP] = (float)value;
    }
    out[DRAW_SIZE] = (float)draw_size;
    out[DISCARD_SIZE] = (float)discards;
    out[ROUND] = (float)(rounds - 1);
    if (table_write_seats(self, game) < 0) { /* the seats' part and the finishing flag */
        goto done;
    }
    float finishing = mv[FINISHING];
    memcpy(mv, out, sizeof(out));
    mv[FINISHING] = finishing;
    memcpy(mv + UNSEEN_AT, unseen, sizeof(unseen));
    memcpy(mv + self->grid_start, grids, (size_t)players * GRID_BLOCK * sizeof(float));
    Py_INCREF(events);
    Py_SETREF(self->events, events);
    self->seen = PyList_GET_SIZE(events);
    self->has_held = has_hand;
    self->held = hand;
    result = 0;
done:
    Py_XDECREF(obj);
    Py_XDECREF(discard);
    Py_XDECREF(states);
    Py_XDECREF(values);
    return result;
}

/* the flags of sync(game) (see below), or -1 with an exception set */
static int
table_sync_flags(TableObject *self, PyObject *game)
{
    if (!self->has_view) {
        PyErr_SetString(PyExc_ValueError, "Table was not initialised");
        return -1;
    }
    if (ev_swap == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Table.sync: configure() was not called");
        return -1;
    }
    PyObject *events = PyObject_GetAttr(game, str_events);
    if (events == NULL) {
        return -1;
    }
    int flags;
    if (!PyList_Check(events)) { /* a game that does not record its events: Python says so */
        Py_DECREF(events);
        return NEEDS_NEW_EVENTS;
    }
    if (events != self->events) {
        flags = NEEDS_RESYNC; /* a new events list: read the whole table */
    }
    else if (PyList_GET_SIZE(events) == self->seen) {
        flags = 0;
    }
    else {
        flags = table_apply(self, events, game);
    }
    if (flags < 0) {
        /* the error is set */
    }
    else if (flags & NEEDS_RESYNC) { /* a round's start or end, a reshuffle, the game's end, a new list */
        flags = table_resync(self, game, events);
    }
    else if (flags & NEEDS_SEATS) { /* the turns' start, the round finishing */
        flags = table_write_seats(self, game);
    }
    if (flags < 0) {
        Py_SETREF(self->events, Py_NewRef(Py_None)); /* the buffer may be half patched: resync next time */
    }
    Py_DECREF(events);
    return flags;
}

/* sync(game) -> flags: 0 once the buffer is up to date with game.events (the events since the last call
 * applied; the whole table read again after a round's start or end, a reshuffle, the game's end or on a
 * new events list), or 4 when game.events is not a list (Python raises its error). After an error the
 * next call reads the whole table again (the buffer may be half patched). */
static PyObject *
table_sync(TableObject *self, PyObject *game)
{
    int flags = table_sync_flags(self, game);
    return flags < 0 ? NULL : PyLong_FromLong(flags);
}

static void
table_release_stages(TableObject *self)
{
    for (Py_ssize_t k = 1; k < self->stage_count; k++) {
        PyBuffer_Release(&self->stage_views[k]);
    }
    PyMem_Free(self->stage_views);
    self->stage_views = NULL;
    self->stage_count = 0;
    Py_CLEAR(self->stages);
}

/* set_observe(stages, masks): what observe() reads (see TableObject); each stage of seats 1 to n-1 is a
 * writable float32 array of the buffer's size that nothing else writes (observe() hands out copies) */
static PyObject *
table_set_observe(TableObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "set_observe expects 2 arguments (stages, masks), got %zd", nargs);
        return NULL;
    }
    if (!self->has_view) {
        PyErr_SetString(PyExc_ValueError, "Table was not initialised");
        return NULL;
    }
    PyObject *stages = args[0];
    if (!PyTuple_Check(stages) || PyTuple_GET_SIZE(stages) != self->players) {
        PyErr_Format(PyExc_ValueError, "set_observe: stages must be a tuple of %ld arrays", self->players);
        return NULL;
    }
    if (!PyDict_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "set_observe: masks must be a dict");
        return NULL;
    }
    table_release_stages(self);
    self->stage_views = PyMem_Calloc((size_t)self->players, sizeof(Py_buffer));
    if (self->stage_views == NULL) {
        return PyErr_NoMemory();
    }
    self->stage_count = 1;
    for (Py_ssize_t k = 1; k < self->players; k++) {
        Py_buffer *view = &self->stage_views[k];
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(stages, k), view,
                               PyBUF_WRITABLE | PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
            table_release_stages(self);
            return NULL;
        }
        self->stage_count = k + 1;
        if (view->itemsize != 4 || view->format == NULL || strcmp(view->format, "f") != 0 ||
            view->len != self->view.len || view->buf == self->view.buf) {
            table_release_stages(self);
            PyErr_SetString(PyExc_ValueError, "set_observe: each stage must be a float32 array of the buffer's size");
            return NULL;
        }
    }
    Py_XSETREF(self->stages, Py_NewRef(stages));
    Py_XSETREF(self->masks, Py_NewRef(args[1]));
    Py_RETURN_NONE;
}

/* the buffer in seat's relative order, into seat's stage: seats' and grids' blocks rotated by seat */
static void
table_fill_stage(TableObject *self, long seat)
{
    const float *src = (const float *)self->view.buf;
    float *dst = (float *)self->stage_views[seat].buf;
    const long n = self->players;
    const Py_ssize_t grids = self->grid_start;
    memcpy(dst, src, TABLE_SIZE * sizeof(float));
    memcpy(dst + TABLE_SIZE, src + TABLE_SIZE + SEAT_SIZE * seat, SEAT_SIZE * (n - seat) * sizeof(float));
    memcpy(dst + TABLE_SIZE + SEAT_SIZE * (n - seat), src + TABLE_SIZE, SEAT_SIZE * seat * sizeof(float));
    memcpy(dst + grids, src + grids + GRID_BLOCK * seat, GRID_BLOCK * (n - seat) * sizeof(float));
    memcpy(dst + grids + GRID_BLOCK * (n - seat), src + grids, GRID_BLOCK * seat * sizeof(float));
}

/* observe(game, seat, encoder) -> {"observation", "action_mask"} or None
 *
 * SkyjoEnv.observe's hot path: sync (calling encoder.finish_sync(game, flags) when it is not 0: an error),
 * then, when seat's decision is due and its legal tuple's mask is known, the observation (the buffer
 * rotated into seat's order in its stage, then a copy of the stage: a fresh array) and the shared mask.
 * None: Python does the rest (the buffer is in sync by then, or game is None). */
static PyObject *
table_observe(TableObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "observe expects 3 arguments (game, seat, encoder), got %zd", nargs);
        return NULL;
    }
    if (self->stages == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Table.observe: set_observe() was not called");
        return NULL;
    }
    PyObject *game = args[0];
    if (game == Py_None) { /* no game yet: Python says so */
        Py_RETURN_NONE;
    }
    long seat = PyLong_AsLong(args[1]);
    if (seat == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (seat < 0 || seat >= self->players) {
        PyErr_Format(PyExc_ValueError, "observe: seat must be from 0 to %ld, got %ld", self->players - 1, seat);
        return NULL;
    }
    int flags = table_sync_flags(self, game);
    if (flags < 0) {
        return NULL;
    }
    if (flags) {
        PyObject *flags_obj = PyLong_FromLong(flags);
        if (flags_obj == NULL) {
            return NULL;
        }
        PyObject *done = PyObject_CallMethodObjArgs(args[2], str_finish_sync, game, flags_obj, NULL);
        Py_DECREF(flags_obj);
        if (done == NULL) {
            return NULL;
        }
        Py_DECREF(done);
    }
    PyObject *due = PyObject_GetAttr(game, str_seat);
    if (due == NULL) {
        return NULL;
    }
    long due_seat = PyLong_AsLong(due);
    Py_DECREF(due);
    if (due_seat == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (due_seat != seat) {
        Py_RETURN_NONE;
    }
    PyObject *over = PyObject_GetAttr(game, str_over);
    if (over == NULL) {
        return NULL;
    }
    int is_over = PyObject_IsTrue(over);
    Py_DECREF(over);
    if (is_over < 0) {
        return NULL;
    }
    if (is_over) {
        Py_RETURN_NONE;
    }
    PyObject *legal = PyObject_CallMethodNoArgs(game, str_legal_actions);
    if (legal == NULL) {
        return NULL;
    }
    PyObject *key = PyLong_FromVoidPtr(legal); /* id(legal): the engine hands out cached tuples */
    if (key == NULL) {
        Py_DECREF(legal);
        return NULL;
    }
    PyObject *mask = PyDict_GetItemWithError(self->masks, key); /* borrowed */
    Py_DECREF(key);
    Py_DECREF(legal); /* after the look-up: a tuple with a mask is kept alive by aec._LEGAL_KEPT */
    if (mask == NULL) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        Py_RETURN_NONE; /* a legal set not seen yet: Python makes its mask */
    }
    Py_INCREF(mask);
    if (seat > 0) {
        table_fill_stage(self, seat);
    }
    PyObject *observation = PyObject_CallMethodNoArgs(PyTuple_GET_ITEM(self->stages, seat), str_copy); /* fresh */
    if (observation == NULL) {
        Py_DECREF(mask);
        return NULL;
    }
    PyObject *out = PyDict_New();
    if (out == NULL || PyDict_SetItem(out, str_observation, observation) < 0 ||
        PyDict_SetItem(out, str_action_mask, mask) < 0) {
        Py_XDECREF(out);
        out = NULL;
    }
    Py_DECREF(observation);
    Py_DECREF(mask);
    return out;
}

static PyObject *
table_get_held(TableObject *self, void *closure)
{
    return self->has_held ? PyLong_FromLong(self->held) : Py_NewRef(Py_None);
}

static PyObject *
table_get_seen(TableObject *self, void *closure)
{
    return PyLong_FromSsize_t(self->seen);
}

static int
table_init(TableObject *self, PyObject *args, PyObject *kwds)
{
    PyObject *buffer;
    if (!PyArg_ParseTuple(args, "O:Table", &buffer)) {
        return -1;
    }
    if (self->has_view) {
        PyErr_SetString(PyExc_TypeError, "Table is initialised once");
        return -1;
    }
    if (PyObject_GetBuffer(buffer, &self->view, PyBUF_WRITABLE | PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
        return -1;
    }
    self->has_view = 1;
    Py_ssize_t size = self->view.len / 4;
    if (self->view.itemsize != 4 || self->view.format == NULL || strcmp(self->view.format, "f") != 0 ||
        size < TABLE_SIZE + 2 * (SEAT_SIZE + GRID_BLOCK) || (size - TABLE_SIZE) % (SEAT_SIZE + GRID_BLOCK) != 0) {
        PyBuffer_Release(&self->view);
        self->has_view = 0;
        PyErr_SetString(PyExc_ValueError,
                        "Table: the buffer must be float32 (format 'f') of 34 + 41 per player floats, 2+ players");
        return -1;
    }
    self->players = (long)((size - TABLE_SIZE) / (SEAT_SIZE + GRID_BLOCK));
    self->grid_start = TABLE_SIZE + self->players * SEAT_SIZE;
    Py_XSETREF(self->events, Py_NewRef(Py_None));
    self->seen = 0;
    self->has_held = 0;
    self->held = 0;
    return 0;
}

static void
table_dealloc(TableObject *self)
{
    if (self->has_view) {
        PyBuffer_Release(&self->view);
        self->has_view = 0;
    }
    Py_CLEAR(self->events);
    table_release_stages(self);
    Py_CLEAR(self->masks);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef table_methods[] = {
    {"sync", (PyCFunction)table_sync, METH_O,
     "sync(game) -> flags: bring the buffer up to date with game.events; 0, or 4 when game.events is not a "
     "list."},
    {"set_observe", (PyCFunction)(void (*)(void))table_set_observe, METH_FASTCALL,
     "set_observe(stages, masks): per seat a float32 array observe() fills in its order and copies (seat 0's: "
     "the array over the buffer), the dict id(legal tuple) -> action mask."},
    {"observe", (PyCFunction)(void (*)(void))table_observe, METH_FASTCALL,
     "observe(game, seat, encoder) -> {'observation', 'action_mask'} when seat's decision is due and its mask "
     "is known, else None (the buffer is in sync: Python does the rest)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef table_getset[] = {
    {"held", (getter)table_get_held, NULL, "the card in hand the buffer shows (taken out of the unseen counts)",
     NULL},
    {"seen", (getter)table_get_seen, NULL, "how many of the events list's events are in the buffer", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject TableType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "skyjo_ref.env._fastobs.Table",
    .tp_basicsize = sizeof(TableObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The compiled catch-up state of one TableEncoder: Table(float32 memoryview).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)table_init,
    .tp_dealloc = (destructor)table_dealloc,
    .tp_methods = table_methods,
    .tp_getset = table_getset,
};

static PyMethodDef fastobs_methods[] = {
    {"configure", fastobs_configure, METH_VARARGS,
     "configure(swap, draw, take, reveal, final_reveal, discard, column_cleared, turns_start, round_finishing, "
     "resync_kinds): the EventKind members to recognise (called once by encoding.py)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef fastobs_module = {
    PyModuleDef_HEAD_INIT, "_fastobs",
    "TableEncoder's per-event catch-up, compiled (optional; encoding.py is the reference).", -1, fastobs_methods,
};

PyMODINIT_FUNC
PyInit__fastobs(void)
{
    if (str_hand == NULL && (str_hand = PyUnicode_InternFromString("hand")) == NULL) {
        return NULL;
    }
    if (str_discard == NULL && (str_discard = PyUnicode_InternFromString("discard")) == NULL) {
        return NULL;
    }
    struct {
        PyObject **slot;
        const char *text;
    } names[] = {{&str_events, "events"},
                 {&str_seat, "seat"},
                 {&str_over, "over"},
                 {&str_legal_actions, "legal_actions"},
                 {&str_copy, "copy"},
                 {&str_observation, "observation"},
                 {&str_action_mask, "action_mask"},
                 {&str_finish_sync, "finish_sync"},
                 {&str_totals, "totals"},
                 {&str_finisher, "finisher"},
                 {&str_starter, "starter"},
                 {&str_decision, "decision"},
                 {&str_states, "states"},
                 {&str_values, "values"},
                 {&str_draw_pile, "draw_pile"},
                 {&str_rounds, "rounds"}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (*names[i].slot == NULL && (*names[i].slot = PyUnicode_InternFromString(names[i].text)) == NULL) {
            return NULL;
        }
    }
    if (PyType_Ready(&TableType) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&fastobs_module);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(module, "Table", (PyObject *)&TableType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
