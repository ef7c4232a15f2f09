"""The steps of an unmodified script (docs/recording.md, "One command"): the
loops of the user's own code, watched through sys.monitoring's JUMP events:
the script's code objects and every module that is not installed (neither
the standard library nor site-packages: the `engine.py` beside a `train.py`
that calls its `train_one_epoch`). A jump in installed code (torch,
transformers, ...) is switched off at its first event, so libraries run
untouched after their first pass, unless they drive the steps from outside
any loop of the user's (a Trainer's train(): library_loops.py adopts them).

A loop's iteration ends where its body jumps back to the loop's head. The
script's step loop is the first loop whose iteration runs at least
MIN_OPS_PER_STEP operator calls that compute (counted by the recorder without
recording them; those that only make, fill, move or view data are not
counted): a loop building a dataset (randint, ones_like, .to(device)) or a
list comprehension counts none or a few per iteration, a training or
inference loop hundreds. Three kinds of loop do as
many and are passed over: one whose iteration builds modules (registers
parameters: `[Block(d) for _ in range(n)]`, set-up), one that runs inside a
torch.nn.Module's call (the loop over blocks in a forward written in the
script), and one over modules (`for layer in layers:` in a plain function
that the step calls): part of a model, not its driver. A loop nested in
another of the user's loops (in its function or a caller's) is taken once it
has run NESTED_STEPS iterations in one pass of the outer loop (batches, not
epochs), or when the outer loop's iteration ends with no operator run after
the inner loop (an epoch of a few batches). A comprehension or generator
expression nested in a loop (`torch.cat([model(r) for r in x])`, a batch's
rows one at a time) is taken only that second way: it computes one value of
the outer loop's iteration, which usually goes on with it. Where operators did run there,
the inner loop is part of the outer loop's step (micro-batches accumulated
before one optimizer step) and the outer loop is judged instead; so it is
where an optimizer steps in some of the inner loop's iterations only (the
last micro-batch's, as in Transformers' Trainer). A nested loop
that runs with gradients off inside a loop whose body calls backward() (itself,
or through the user's functions it calls by name) is an evaluation run from
the training loop and is passed over. The caller
can name another loop's line. The step loop's first two iterations (of a nested one: those before
it was taken) are warm-up (autotuning, lazy initialization, the allocator
settling); each of its later iterations is one step.
"""

from __future__ import annotations

import dis
import functools
import inspect
import os
import sys
import sysconfig
import time
import types
from typing import Callable, Optional

from magneton.library_loops import LibraryLoops
from magneton.monitoring import claim_tool

MIN_OPS_PER_STEP = 10
NESTED_STEPS = 8
MICRO_BATCHES = 64  # at most this many iterations of gradients accumulated wait for an optimizer step
LONG_AFTER_S = 2.0  # seconds after the step loop was found below which no early-loop hint is given


def code_objects(code: types.CodeType) -> list:
    """`code` and every code object nested in it (functions, classes, lambdas)."""
    out, todo = [], [code]
    while todo:
        c = todo.pop()
        out.append(c)
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return out


class ScriptSteps:
    """Calls `on_step()` at the end of each iteration of the script's step
    loop, from the end of its second iteration on (the first call marks the
    end of the warm-up). `counted_ops()` is the recorder's operator count."""

    def __init__(self, code: types.CodeType, counted_ops: Callable[[], int], on_step: Callable[[], None],
                 line: Optional[str] = None):
        # The script's code objects: watched even where installed (`-m an.installed.module`).
        self._script = set(code_objects(code))
        self._users: dict = {}              # file name -> whether it is the user's code
        self._pid = os.getpid()             # a forked child (a DataLoader worker) inherits the watching
        self.calls = 0                     # calls of the step loop's function after the one it was found in
        # Only the loop whose head is on this line: "N" (any of the user's files) or "FILE:N".
        self.file, _, number = line.rpartition(":") if line is not None else ("", "", "")
        self.line = int(number) if line is not None else None
        self.counted_ops = counted_ops
        self.on_step = on_step
        self.loop: Optional[tuple] = None  # (code, loop head) of the step loop once found
        self.iterations = 0                # of the step loop, since it was found
        self._ended: dict = {}             # loop -> operator count when its last iteration ended
        self._passed_over: set = set()     # loops that are no step: in a Module's call, an outer step, an evaluation
        self._pending: Optional[_Nested] = None  # a qualifying loop nested in another, not yet taken
        self._tool: Optional[int] = None
        self._params = 0                   # parameters registered by modules built so far
        self._optimizer_steps = 0          # optimizer steps taken so far (torch's global step hook)
        self._hooks: list = []             # torch's hook handles, removed once the loop is found
        self._times = [0.0, 0.0, 0.0]      # monotonic seconds: the loop found, its last iteration's end, stop()
        # Installed loops that drive the steps where no loop of the user's encloses them (a Trainer's).
        self._library = LibraryLoops(self._is_users, _loops_at, counted_ops, code)

    def start(self) -> bool:
        """Starts watching; False when no sys.monitoring tool id is free (or Python < 3.12)."""
        self._tool = claim_tool("magneton")
        if self._tool is None:
            return False
        mon = sys.monitoring
        torch = sys.modules.get("torch")
        if torch is not None:  # torch >= 2.0 has both global hooks
            for register, hook in ((getattr(torch.nn.modules.module, "register_module_parameter_registration_hook",
                                            None), self._parameter_registered),
                                   (getattr(sys.modules.get("torch.optim.optimizer"),
                                            "register_optimizer_step_post_hook", None),
                                    self._optimizer_stepped)):
                if register is not None:
                    self._hooks.append(register(hook))
        mon.register_callback(self._tool, mon.events.JUMP, self._jump)
        mon.set_events(self._tool, mon.events.JUMP)
        if self.line is None:
            self._library.start()
        return True

    def _parameter_registered(self, module, name, param):
        self._params += 1

    def _optimizer_stepped(self, optimizer, args, kwargs):
        self._optimizer_steps += 1

    def _remove_hooks(self) -> None:
        for handle in self._hooks:
            handle.remove()
        self._hooks = []

    def stop(self) -> None:
        self._times[2] = time.monotonic()
        self._library.stop()
        self._remove_hooks()
        mon = getattr(sys, "monitoring", None)
        if mon is None or self._tool is None:
            return
        mon.set_events(self._tool, 0)
        if self.loop is not None:
            mon.set_local_events(self._tool, self.loop[0], 0)
        mon.register_callback(self._tool, mon.events.JUMP, None)
        mon.register_callback(self._tool, mon.events.PY_START, None)
        mon.free_tool_id(self._tool)
        self._tool = None

    def _is_users(self, code) -> bool:
        if code in self._script:
            return True
        mine = self._users.get(code.co_filename)
        if mine is None:
            # A file named by the step line is watched even where installed (a Trainer's loop).
            name = code.co_filename
            mine = self._users[name] = users_file(name) or (bool(self.file) and _same_file(name, self.file))
        return mine

    def _jump(self, code, offset, destination):
        if os.getpid() != self._pid or not self._watched((code, destination)):
            return sys.monitoring.DISABLE  # installed code, or a forked worker's: this jump never calls again
        if destination >= offset:  # forward: not the end of an iteration
            return None
        loop = (code, destination)
        if self.loop is not None:
            if loop == self.loop:
                self.iterations += 1
                self._times[1] = time.monotonic()
                self.on_step()
                return None
            return sys.monitoring.DISABLE  # only the step loop matters from now on
        if self.line is not None and (_line_of(code, destination) != self.line or
                                      not _same_file(code.co_filename, self.file)):
            return None
        if loop in self._passed_over:
            return None
        if self._pending is not None and self._nested_jump(loop):
            return None
        now = (self.counted_ops(), self._params)
        before = self._ended.get(loop)
        self._ended[loop] = now
        # The second iteration ending is the first whose operators are all counted.
        enough = self.line is not None or (before is not None and now[0] - before[0] >= MIN_OPS_PER_STEP
                                           and now[1] == before[1])
        if enough and self.line is None and (_inside_module(sys._getframe(1)) or
                                             _over_modules(sys._getframe(1), code, destination)):
            self._passed_over.add(loop)
            return None
        if before is not None and enough and self._pending is None:
            outer = set() if self.line is not None else _enclosing_loops(sys._getframe(1), offset, destination,
                                                                         self._watched)
            if outer and _evaluation_in_training(outer, sys._getframe(1)):
                self._passed_over.add(loop)
            elif outer:
                self._pending = _Nested(loop, outer, 2, now[0], self._optimizer_steps)
                self._pending.comprehension = _comprehension(code, offset)
                frame = sys._getframe(1)
                self._pending.trains = torch_grad_enabled() and _trains(code, destination, frame)
            else:
                self._choose(loop, 2)
        return None

    def _watched(self, loop) -> bool:
        return self._is_users(loop[0]) or loop in self._library.adopted

    def _nested_jump(self, loop) -> bool:
        """A jump while a nested loop waits to be taken; True when it is handled."""
        p = self._pending
        if loop == p.loop:
            p.iterations += 1
            p.ops = self.counted_ops()
            p.stepped.append(self._optimizer_steps > p.optimizer_steps)
            p.optimizer_steps = self._optimizer_steps
            if p.take_next or (p.iterations >= NESTED_STEPS and not p.comprehension):
                if not p.take_next and p.trains and not p.whole and not any(p.stepped) and \
                        p.iterations < MICRO_BATCHES:
                    # Gradients accumulated over many micro-batches before an optimizer step
                    # (nanoGPT's 40): whether it steps after them shows at the outer loop's end.
                    # Past MICRO_BATCHES, a loop that updates its weights by hand (no optimizer).
                    return True
                self._pending = None
                if any(p.stepped) and not all(p.stepped):
                    # An optimizer step in some of its iterations only (a Trainer's micro-batches,
                    # the last of which steps it): part of the outer loop's step.
                    self._passed_over.add(loop)
                else:
                    self._choose(loop, p.iterations)
            return True
        if loop in p.outer:
            if self.counted_ops() > p.ops:  # the outer step's own work after the inner loop: an optimizer step
                self._passed_over.add(p.loop)
                self._pending = None
                return False
            # A pass of few iterations (an epoch of a few batches): the inner loop is the step, once
            # a whole pass was seen where a training steps an optimizer (a partial pass may hold only
            # the last of several micro-batches, the one that steps it).
            p.take_next = p.whole or self._optimizer_steps == 0
            p.whole = True
        return False

    def _choose(self, loop, iterations: int) -> None:
        self._library.found()
        self._remove_hooks()
        self.loop = loop
        self.iterations = iterations
        self._times[0] = self._times[1] = time.monotonic()
        code = loop[0]
        if code.co_name != "<module>":  # count the calls of its function: is it a loop inside each step?
            mon = sys.monitoring
            mon.register_callback(self._tool, mon.events.PY_START, self._called)
            mon.set_local_events(self._tool, code, mon.events.PY_START)
        self.on_step()

    def _called(self, code, offset):
        if os.getpid() == self._pid:
            self.calls += 1

    @property
    def sampled(self) -> bool:
        """Whether the step loop is a library's, found by sampling once it had run a while."""
        return self.loop is not None and self.loop in self._library.adopted

    def sampled_hint(self) -> Optional[str]:
        """A line when the step loop was found by sampling: which of its iterations is recorded
        depends on timing, so two runs may record different ones."""
        if not self.sampled:
            return None
        code, head = self.loop
        where = os.path.join(*code.co_filename.split(os.sep)[-2:])
        return (f"the step loop, {self.describe(short=True)}, is a library's, found by sampling once it had run a "
                f"while: which iteration is recorded depends on timing, so two runs can hold different ones (a later "
                f"training step, a later decoding position); --step-line {where}:{_line_of(code, head)} records the "
                f"same one in both")

    def inner_loop_hint(self) -> Optional[str]:
        """A line when the step loop looks like a loop inside each step: its
        function was called anew more often than it iterated per call (a
        forward's loop over layers, called once per training step), where a
        loop over batches runs many iterations in few calls (one per epoch)."""
        calls = self.calls + 1
        if self.loop is None or calls < 3 or self.iterations / calls >= calls:
            return None
        return (f"the step loop, {self.describe()}, ran about {self.iterations // calls} iterations in each of "
                f"{calls} calls of its function: if each call is one step (a forward's loop over layers), name "
                "the loop that drives the steps with --step-line FILE:N")

    def early_loop_hint(self) -> Optional[str]:
        """A line when the script ran on long after the step loop's last iteration: the loop
        taken may be a first pass (an evaluation before training) rather than the main loop."""
        found, last, end = self._times
        if self.loop is None or end - found < LONG_AFTER_S or last - found >= (end - found) / 2:
            return None
        return (f"the step loop, {self.describe()}, ended {end - last:.1f} s before the script did, after "
                f"{last - found:.1f} s of steps: if the script's main loop is another one, name it with "
                "--step-line FILE:N")

    def describe(self, short: bool = False) -> str:
        """The step loop as "the loop at FILE:N (FUNCTION)"; short: the file's name without its folder."""
        if self.loop is None:
            return "no loop"
        code, head = self.loop
        name = os.path.basename(code.co_filename) if short else code.co_filename
        return f"the loop at {name}:{_line_of(code, head)} ({code.co_name})"


class _Nested:
    """A qualifying loop nested in others of the user's loops, watched until it is taken or passed over."""

    def __init__(self, loop: tuple, outer: set, iterations: int, ops: int, optimizer_steps: int):
        self.loop, self.outer, self.iterations, self.ops = loop, outer, iterations, ops
        self.optimizer_steps = optimizer_steps  # the count at its last iteration's end
        self.stepped: list = []  # per iteration since: whether an optimizer stepped in it
        self.whole = False       # whether a whole pass of the outer loop was seen
        self.take_next = False
        self.trains = False      # whether its body calls backward() with gradients on
        self.comprehension = False  # a list, set or dict comprehension, or a generator expression


_BUILDS = {"LIST_APPEND", "SET_ADD", "MAP_ADD"}


@functools.lru_cache(maxsize=1024)
def _comprehension(code: types.CodeType, offset: int) -> bool:
    """Whether the loop whose iteration ends with the jump at `offset` is a comprehension's (its
    iteration ends adding to the list, set or dict it builds) or a generator expression's."""
    if code.co_name == "<genexpr>":
        return True
    before = None
    for ins in dis.get_instructions(code):
        if ins.offset == offset:
            return before is not None and before.opname in _BUILDS
        before = ins
    return False


@functools.lru_cache(maxsize=1024)
def _back_edges(code: types.CodeType) -> tuple:
    """(offset, target) of every backward jump in `code`: the ends of its loops' iterations."""
    return tuple((ins.offset, ins.argval) for ins in dis.get_instructions(code) if ins.opname == "JUMP_BACKWARD")


def _enclosing_loops(frame, offset: int, head: int, watched: Callable) -> set:
    """The watched loops, as (code, head), that enclose the loop at `head` whose iteration
    just ended at `offset` in `frame`: in its own function, and around the calls that
    led to it in its callers, through code between them that is not watched (a
    decorator's wrapper such as torch.no_grad's)."""
    code = frame.f_code
    out = {(code, t) for o, t in _back_edges(code) if t < head and o > offset}
    frame = frame.f_back
    while frame is not None:
        out |= _loops_at(frame.f_code, frame.f_lasti)
        frame = frame.f_back
    return {loop for loop in out if watched(loop)}


def _loops_at(code: types.CodeType, at: int) -> set:
    """The loops of `code`, as (code, head), whose body holds the instruction at offset `at`."""
    return {(code, t) for o, t in _back_edges(code) if t <= at < o}


def torch_grad_enabled() -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and torch.is_grad_enabled()


def _evaluation_in_training(outer: set, frame) -> bool:
    """Whether the loop whose iteration just ended (in `frame`) runs with gradients off inside
    one of the user's loops (`outer`) that trains: an evaluation run from the training loop
    (nanoGPT's estimate_loss every eval_interval steps, the first included), not the step."""
    if torch_grad_enabled() or "torch" not in sys.modules:
        return False
    while frame is not None:
        code = frame.f_code
        if any(_trains(code, head, frame) for c, head in outer if c is code):
            return True
        frame = frame.f_back
    return False


def _trains(code: types.CodeType, head: int, frame, depth: int = 2) -> bool:
    """Whether the body of the loop at `head` calls backward() (`loss.backward()`,
    `scaler.scale(loss).backward()`, `accelerator.backward(loss)`), in its own code or in
    the user's functions and methods it calls by name (`train_step(x)`,
    `self.training_step(batch)`), `depth` calls deep. `frame`: the loop's, where its
    names resolve; methods on the objects of the user's classes its function holds."""
    owners = []
    if code.co_flags & inspect.CO_NEWLOCALS:
        for value in frame.f_locals.values():
            kind = type(value)
            if kind not in owners and users_file(getattr(sys.modules.get(kind.__module__), "__file__", None) or ""):
                owners.append(kind)
    return _calls_backward(code, head, frame.f_globals, owners, depth)


def _calls_backward(code: types.CodeType, head: int, names: dict, owners: list, depth: int) -> bool:
    end = max((o for o, t in _back_edges(code) if t == head), default=head)
    called = _names_in(code, head, end)
    if "backward" in called:
        return True
    if depth == 0:
        return False
    for name in called:
        fn = names.get(name)
        for kind in owners if fn is None else ():  # a method: looked up without running descriptors
            fn = inspect.getattr_static(kind, name, None)
            if fn is not None:
                break
        fn = getattr(fn, "__func__", fn)
        fn_code = getattr(fn, "__code__", None)
        if fn_code is not None and users_file(fn_code.co_filename) and \
                _calls_backward(fn_code, 0, getattr(fn, "__globals__", {}), owners, depth - 1):
            return True
    return False


@functools.lru_cache(maxsize=256)
def _names_in(code: types.CodeType, head: int, end: int) -> frozenset:
    """The global and attribute names loaded between offsets `head` and `end` of `code`
    (the whole code where `end` is at or before `head`)."""
    whole = end <= head
    return frozenset(ins.argval for ins in dis.get_instructions(code)
                     if (whole or head <= ins.offset <= end) and isinstance(ins.argval, str)
                     and ins.opname in ("LOAD_ATTR", "LOAD_METHOD", "LOAD_GLOBAL", "LOAD_NAME"))


def _installed_dirs() -> tuple:
    paths = sysconfig.get_paths()
    dirs = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    dirs.add(os.path.dirname(os.path.abspath(__file__)))  # magneton's own, wherever it lives
    return tuple(os.path.realpath(d) + os.sep for d in dirs)


_INSTALLED = _installed_dirs()


def users_file(name: str) -> bool:
    """Whether code from the file `name` is the user's: a real file outside the
    standard library, site-packages (of this environment or any other) and
    magneton itself."""
    if name.startswith("<"):  # <frozen ...>, <string>: not a file of the user's
        return False
    path = os.path.realpath(name)
    parts = path.split(os.sep)
    return not path.startswith(_INSTALLED) and "site-packages" not in parts and "dist-packages" not in parts


def _inside_module(frame) -> bool:
    """Whether `frame` (the loop's) runs inside a call of a torch.nn.Module
    (its forward and what that calls): torch's Module.__call__ is up the
    stack. A training loop in a method of the user's own Module class that
    is called directly (model.fit()) is not inside one."""
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    module = torch.nn.Module
    calls = {getattr(module, name).__code__ for name in ("_call_impl", "_wrapped_call_impl") if hasattr(module, name)}
    while frame is not None:
        if frame.f_code in calls:
            return True
        frame = frame.f_back
    return False


@functools.lru_cache(maxsize=256)
def _loop_variables(code: types.CodeType, head: int) -> tuple:
    """The names a `for` loop whose head (its FOR_ITER) is at `head` binds each iteration."""
    names, after = [], False
    for ins in dis.get_instructions(code):
        if ins.offset == head:
            if ins.opname != "FOR_ITER":
                return ()
            after = True
        elif after:
            if ins.opname.startswith("STORE_"):
                names.append(ins.argval)
            elif not ins.opname.startswith("UNPACK_"):
                break
    return tuple(n for n in names if isinstance(n, str))


def _over_modules(frame, code: types.CodeType, head: int) -> bool:
    """Whether the loop at `head` iterates over torch.nn.Module objects
    (`for layer in layers:`, `for i, block in enumerate(blocks):`): a model's
    forward written out in a plain function, run once per step."""
    torch = sys.modules.get("torch")
    names = _loop_variables(code, head)
    if torch is None or not names:
        return False
    scope = frame.f_locals
    return any(isinstance(scope.get(n, frame.f_globals.get(n)), torch.nn.Module) for n in names)


def _same_file(name: str, wanted: str) -> bool:
    """Whether `name` is the file `wanted` names (any file when it is empty): the same path, or one
    that ends with it (`engine.py`, `src/engine.py`)."""
    if not wanted:
        return True
    path, want = os.path.realpath(name), os.path.normpath(wanted)
    return path == os.path.realpath(wanted) or path.endswith(os.sep + want)


def _line_of(code: types.CodeType, offset: int) -> int:
    return next((ln for start, end, ln in code.co_lines() if start <= offset < end and ln is not None),
                code.co_firstlineno)
