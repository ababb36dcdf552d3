/* skyjo_ref.env._fastobs: TableEncoder's per-event catch-up, compiled (optional).
 *
 * The same arithmetic as TableEncoder._catch_up in encoding.py (the reference: SKYJO_ENV_PURE_PYTHON=1
 * runs it, and tests compare both paths at every step), written against the plain CPython C API (no
 * numpy C API, so numpy is not a build dependency). The float32 buffer is reached through the buffer
 * protocol of the encoder's memoryview; every index taken from an event is checked, and a bad one raises
 * ValueError before anything is written for that event. The rare paths (reading the whole table again at
 * a round's start or end, a reshuffle, the game's end; the seat flags) stay in Python: the function only
 * says they are needed. The GIL is held throughout.
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

/* what Python must do after the call (the second item of the returned tuple) */
#define NEEDS_RESYNC 1
#define NEEDS_SEATS 2
#define NEEDS_NEW_EVENTS 4

/* the EventKind members, set once by configure() (strong references, kept for the process's life) */
static PyObject *ev_swap, *ev_draw, *ev_take, *ev_reveal, *ev_final_reveal, *ev_discard, *ev_column_cleared,
    *ev_turns_start, *ev_round_finishing, *ev_resync_kinds;
static PyObject *str_hand, *str_discard, *str_events, *str_seat, *str_over, *str_legal_actions, *str_copy,
    *str_observation, *str_action_mask, *str_finish_sync;

static PyObject *
fastobs_configure(PyObject *module, PyObject *args)
{
    PyObject *kinds[10];
    if (!PyArg_ParseTuple(args, "OOOOOOOOOO:configure", &kinds[0], &kinds[1], &kinds[2], &kinds[3], &kinds[4],
                          &kinds[5], &kinds[6], &kinds[7], &kinds[8], &kinds[9])) {
        return NULL;
    }
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

/* sync(game) -> flags: 0 when the buffer is up to date with game.events (the events since the last call
 * applied), else what Python must do: 4 read the whole table again (a new events list: call reset()
 * after), 1 the same after the events (a round's start or end, a reshuffle, the game's end), 2 write the
 * seat flags. After an error the next call asks for a resync (the buffer may be half patched). */
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
    if (events != self->events || !PyList_Check(events)) {
        flags = NEEDS_NEW_EVENTS;
    }
    else if (PyList_GET_SIZE(events) == self->seen) {
        flags = 0;
    }
    else {
        flags = table_apply(self, events, game);
        if (flags < 0) {
            Py_SETREF(self->events, Py_NewRef(Py_None));
        }
    }
    Py_DECREF(events);
    return flags;
}

/* sync(game) -> flags: 0 when the buffer is up to date with game.events (the events since the last call
 * applied), else what Python must do: 4 read the whole table again (a new events list: call reset()
 * after), 1 the same after the events (a round's start or end, a reshuffle, the game's end), 2 write the
 * seat flags. After an error the next call asks for a resync (the buffer may be half patched). */
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
 * SkyjoEnv.observe's hot path: sync (calling encoder.finish_sync(game, flags) when Python has work),
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

/* reset(events, held): the state after Python read the whole table again (every event of events seen) */
static PyObject *
table_reset(TableObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "reset expects 2 arguments (events, held), got %zd", nargs);
        return NULL;
    }
    if (!PyList_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "reset: events must be a list");
        return NULL;
    }
    long held = 0;
    int has_held = args[1] != Py_None;
    if (has_held && card_value(args[1], "held", &held) < 0) {
        return NULL;
    }
    Py_SETREF(self->events, Py_NewRef(args[0]));
    self->seen = PyList_GET_SIZE(args[0]);
    self->has_held = has_held;
    self->held = held;
    Py_RETURN_NONE;
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
     "sync(game) -> flags: apply game.events since the last call; 0, or 4 new events list (resync, then "
     "reset), 1 resync, 2 write the seat flags."},
    {"set_observe", (PyCFunction)(void (*)(void))table_set_observe, METH_FASTCALL,
     "set_observe(stages, masks): per seat a float32 array observe() fills in its order and copies (seat 0's: "
     "the array over the buffer), the dict id(legal tuple) -> action mask."},
    {"observe", (PyCFunction)(void (*)(void))table_observe, METH_FASTCALL,
     "observe(game, seat, encoder) -> {'observation', 'action_mask'} when seat's decision is due and its mask "
     "is known, else None (the buffer is in sync: Python does the rest)."},
    {"reset", (PyCFunction)(void (*)(void))table_reset, METH_FASTCALL,
     "reset(events, held): every event of events is in the buffer, held is the card in hand it shows."},
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
                 {&str_finish_sync, "finish_sync"}};
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
