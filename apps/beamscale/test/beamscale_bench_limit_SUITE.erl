%% `beamscale bench' bounded in time (issue 55): an expression that never returns (a busy loop,
%% a receive that waits for ever) ends at its point's limit or at the command's, with a named
%% reason and exit 1; what was measured before it is printed and kept; its node does not stay.
-module(beamscale_bench_limit_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([command_limit/0, expr_limit/0]).
-export([command_limit/1, expr_limit/1]).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [command_limit, expr_limit].

init_per_suite(Config) -> Config.

end_per_suite(_Config) -> beamscale_test_cli:no_strays().

%% Short budgets: the good expression is measured in about a second.
%% One launch, and the seed whose order measures the first expression first (launches shuffle
%% each round's order): the limit then falls on the second.
-define(BUDGET, ["--time", "0.2", "--warmup", "0.1", "--samples", "5", "--launches", "1",
                 "--seed", "2"]).
%% Beyond the limit: the node killed, the table printed; the emulator's own start and a loaded
%% host besides.
-define(SLACK_S, 6).

command_limit() ->
    [{doc, "A busy loop under --time-limit 8: exit 1 at about 8 s, the reason, the table of "
           "the expression measured before it."}].
command_limit(_Config) ->
    {Us, {Status, Out}} = timer:tc(fun() ->
        beamscale_test_cli:run(["bench", "--time-limit", "8" | ?BUDGET]
                               ++ ["1 + 1", "(fun Loop() -> Loop() end)()"])
    end),
    ct:pal("~ts~nended after ~.1f s (a loaded host)", [Out, Us / 1.0e6]),
    ?assertEqual(1, Status),
    ?assertMatch({match, _}, re:run(Out, "time limit: the command's --time-limit was reached "
                                         "while measuring \\(fun Loop\\(\\)")),
    ?assertMatch({match, _}, re:run(Out, "1 \\+ 1")),
    ?assert(Us < (8 + ?SLACK_S) * 1000000, Us).

expr_limit() ->
    [{doc, "A receive that never returns under --expr-time-limit 3, kept as a run directory: "
           "exit 1, the reason, the expression measured before it in the directory."}].
expr_limit(Config) ->
    Priv = ?config(priv_dir, Config),
    {Us, {Status, Out}} = timer:tc(fun() ->
        beamscale_test_cli:run(["bench", "--expr-time-limit", "3", "--name", "limited", "--out",
                                Priv | ?BUDGET]
                               ++ ["1 + 1", "receive never -> ok end"])
    end),
    ct:pal("~ts~nended after ~.1f s (a loaded host)", [Out, Us / 1.0e6]),
    ?assertEqual(1, Status),
    ?assertMatch({match, _}, re:run(Out, "time limit: receive never -> ok end ran past its "
                                         "limit \\(--expr-time-limit\\)")),
    Dir = filename:join(Priv, "limited"),
    ?assert(filelib:is_regular(filename:join(Dir, "index.html"))),
    {ok, Micro} = file:read_file(filename:join(Dir, "micro.json")),
    ?assertNotEqual(nomatch, binary:match(Micro, <<"1 + 1">>)),
    ?assertEqual(nomatch, binary:match(Micro, <<"receive never">>)),
    %% Two node boots, one short measure, then 3 s.
    ?assert(Us < (3 + 3 + ?SLACK_S) * 1000000, Us).
