%% ets_bench on this node through the runner: phases timed apart, results against an
%% expectation computed here from the same seed, the same output at any scheduler count, options
%% this runtime accepts or refuses, the argument sets of each selection.
-module(beamscale_bench_ets_bench_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, end_per_testcase/2]).
-export([phases_and_results/1, same_output_any_schedulers/1, accepted_and_refused/1,
         refused_fails_iteration/1, argument_sets/1, nothing_left_behind/1,
         dead_worker_fails_phase/1]).
-export([phases_and_results/0, same_output_any_schedulers/0, accepted_and_refused/0,
         refused_fails_iteration/0, argument_sets/0, nothing_left_behind/0,
         dead_worker_fails_phase/0]).

-define(M, beamscale_bench_ets_bench).
-define(SEED, 42).
-define(KEYS, 2000).
-define(OPS, 20000).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [phases_and_results, same_output_any_schedulers, accepted_and_refused,
          refused_fails_iteration, argument_sets, nothing_left_behind, dead_worker_fails_phase].

end_per_testcase(_Case, _Config) ->
    _ = erlang:system_flag(schedulers_online, erlang:system_info(schedulers)),
    ok.

iteration(Args) -> beamscale_bench_runner:iteration(ets_bench, ?M, Args, [], []).

%% The distinct keys and the operation counts, drawn with rand from the seed as the paper says
%% (uniform keys in 1..2 x keys; one draw in 1..200 for the kind, then the key).
expected(Mix) ->
    Range = 2 * ?KEYS,
    {Keys, _} = lists:mapfoldl(fun(_, S) -> rand:uniform_s(Range, S) end,
                               rand:seed_s(exsss, {?SEED, 16#e75, 1}), lists:seq(1, ?KEYS)),
    {Kinds, _} = lists:mapfoldl(fun(_, S0) ->
                                        {K, S1} = rand:uniform_s(200, S0),
                                        {_, S2} = rand:uniform_s(Range, S1),
                                        {kind(K, Mix), S2}
                                end, rand:seed_s(exsss, {?SEED, 16#e75, 2}), lists:seq(1, ?OPS)),
    Count = fun(K) -> length([X || X <- Kinds, X =:= K]) end,
    {sets:size(sets:from_list(Keys)), Count(lookup), Count(insert), Count(delete)}.

kind(K, Mix) when K =< 2 * Mix -> lookup;
kind(K, _) when K rem 2 =:= 1 -> insert;
kind(_, _) -> delete.

phases_and_results() -> [{doc, "Phases timed apart; output counts match the seed's."}].
phases_and_results(_Config) ->
    [begin
         Args = [Type, Opt, Mix, {?KEYS, ?OPS, ?SEED}],
         {ok, Timings, Out} = iteration(Args),
         ?assertEqual(["insert", "access", "delete"], [P || {P, _} <- Timings]),
         [?assert(is_float(T) andalso T > 0) || {_, T} <- Timings],
         {Distinct, L, I, D} = expected(Mix),
         Text = binary_to_list(Out),
         ct:log("~p:~n~s", [Args, Text]),
         ?assertNotEqual(nomatch, string:find(Text, io_lib:format("insert: ~b keys in the table",
                                                                  [Distinct]))),
         ?assertNotEqual(nomatch, string:find(Text, io_lib:format(
                                                      "access: ~b lookups, ~b inserts, ~b deletes",
                                                      [L, I, D]))),
         ?assertNotEqual(nomatch, string:find(Text, "delete: 0 keys in the table")),
         %% Without updates the access phase leaves the table as the insert phase left it.
         Mix =:= 100 andalso
             ?assertNotEqual(nomatch, string:find(Text, io_lib:format(
                                                          "access: ~b keys in the table",
                                                          [Distinct])))
     end || {Type, Opt, Mix} <- [{set, none, 90}, {ordered_set, rw, 99}, {set, auto, 100},
                                 {set, {locks, 256}, 90}]].

%% One worker per online scheduler, and the same output with one or two.
same_output_any_schedulers() -> [{doc, "Same output with 1 scheduler online as with all."}].
same_output_any_schedulers(_Config) ->
    Args = [set, w, 90, {?KEYS, ?OPS, ?SEED}],
    Outputs = [begin
                   _ = erlang:system_flag(schedulers_online, S),
                   {ok, _, Out} = iteration(Args),
                   Out
               end || S <- lists:usort([1, erlang:system_info(schedulers)])],
    ?assertEqual(1, length(lists:usort(Outputs))).

accepted_and_refused() -> [{doc, "Options accepted, refused, honoured as the runtime allows."}].
accepted_and_refused(_Config) ->
    [?assert(?M:accepted(T, O)) || T <- [set, ordered_set],
                                    O <- beamscale_bench_ets_workload:options(T)],
    %% Lock counts are for hash tables only.
    ?assertNot(?M:accepted(ordered_set, {locks, 64})),
    ?assert(?M:accepted(set, {locks, 1})),
    %% A lock count is honoured when the table has exactly that many: one lock is raised to
    %% the runtime's minimum. A runtime with one scheduler has no bucket locks at all.
    ?assertNot(?M:honoured(set, {locks, 1})),
    ?assertEqual(erlang:system_info(schedulers) > 1, ?M:honoured(set, {locks, 1024})),
    ?assert(?M:honoured(set, rw)).

refused_fails_iteration() -> [{doc, "A refused option fails the iteration, says so."}].
refused_fails_iteration(_Config) ->
    {error, {refused, _}, [], Out} = iteration([ordered_set, {locks, 64}, 90, {10, 10, 1}]),
    ?assertNotEqual(nomatch, binary:match(Out, <<"refused">>)).

argument_sets() -> [{doc, "Each selection gives its argument sets, counted, no repeats."}].
argument_sets(_Config) ->
    Size = {10, 100, 1},
    All = fun(_, _) -> true end,
    Default = ?M:arg_sets(default, Size, [64], All),
    ?assert(length(Default) >= 2 andalso length(Default) =< 4),
    Matrix = ?M:arg_sets(matrix, Size, [16, 64, 256, 1024], All),
    ?assertEqual(2 * 8 * 3 + 4 * 3, length(Matrix)),
    ?assertEqual(length(Matrix), length(lists:usort(Matrix))),
    ?assertEqual(Matrix, ?M:arg_sets(matrix, Size, [16, 64, 256, 1024], fun ?M:accepted/2)),
    ?assertEqual(2 * 8 * 3 + 3, length(?M:arg_sets(matrix, Size, [256], All))),
    Rg = ?M:arg_sets(reader_groups, Size, [64], All),
    ?assertEqual(6, length(Rg)),
    ?assertEqual([rw], lists:usort([O || [_, O | _] <- Rg])),
    %% Without -ets_bench on this node: the default sets at the version's size.
    [[_, _, _, {Keys, Ops, _}] | _] = ?M:bench_args(short, []),
    ?assertEqual(beamscale_bench_ets_workload:sizes(short), {Keys, Ops}).

%% The table and the workers are gone when an iteration ends.
nothing_left_behind() -> [{doc, "After an iteration its table and workers are gone."}].
nothing_left_behind(_Config) ->
    Before = length(processes()),
    Tabs = length(ets:all()),
    {ok, _, _} = iteration([set, rw, 90, {?KEYS, ?OPS, ?SEED}]),
    timer:sleep(100),
    ?assertEqual(Tabs, length(ets:all())),
    ?assert(length(processes()) =< Before + 1).

%% A worker that dies fails the phase instead of hanging it; the table goes with its owner.
dead_worker_fails_phase() -> [{doc, "A killed worker fails the phase; the table goes."}].
dead_worker_fails_phase(_Config) ->
    Args = [set, rw, 90, {?KEYS, ?OPS, ?SEED}],
    {{continue, ignore}, #{workers := [W | _], tab := Tab} = State} = ?M:run(Args, [], []),
    exit(W, kill),
    ?assertMatch({error, {worker_died, _}}, ?M:run([State | Args], [], [])),
    timer:sleep(100),
    ?assertEqual(undefined, ets:info(Tab)).
