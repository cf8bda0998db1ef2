"""Answer streams (the LARS papers' Def. 5) through answer-set solving, as Ticker's one-shot mode.

At each time point t the rules are applied at t only, over the data the windows
hold; nothing derived at an earlier evaluation is carried over (an `@T` head
puts its atom at T, for this evaluation). Loops through `not` are allowed, so a
time point can have several answer streams, or none.

    ground.py   the rules at t, ground over the windows' content: a normal program of
                time-pinned atoms (Ticker's Alg. 1, instantiated by us, comparisons included)
    solve.py    clingo on that program: every answer set at t, projected on the output, sorted
    engine.py   AnswerStreamEngine: time point after time point, as IncrementalEngine is driven
    check.py    the reference without a solver: guess a set of atoms, check it is a minimal
                model of the reduct, straight from the definition
    cli.py      `rsp-plugin reason --semantics answer-stream [--models 1|all]`
"""
