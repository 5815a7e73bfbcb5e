%% @doc The instruction clock's conditions on a run configuration (`clock' `instructions'):
%% the counters count one thread, the node under test's one scheduler (a busy-waiting or second
%% scheduler would run measured code uncounted, or count in proportion to wall time), on one
%% node (the others are not counted), with no profile (perf on a Valgrind node) and no
%% sampler (its calls to the node would run on the counted scheduler). Scheduler counts of the
%% defaults or a preset become 1; given in a file or an option, anything else is refused.
-module(beamscale_config_clock).

-export([check/2]).

%% @doc The configuration as the clock runs it, or the key at fault and what it must be;
%% `Given(Key)' says whether the user's file or command line set `Key'.
-spec check(map(), fun((atom()) -> boolean())) -> {ok, map()} | {error, atom(), string()}.
check(#{clock := instructions} = Config, Given) ->
    Over = [{B, K} || {B, O} <- maps:to_list(maps:get(overrides, Config, #{})),
                      K <- [schedulers, nodes], not one(maps:get(K, O, [1]))],
    Profiled = maps:get(profile, Config, false) =/= false,
    case {maps:get(schedulers, Config), Given(schedulers), maps:get(nodes, Config), Over} of
        {S, true, _, _} when S =/= [1] ->
            {error, schedulers, "--clock instructions counts one scheduler: give 1 (or leave "
                                "schedulers out)"};
        {_, _, N, _} when N =/= [1] ->
            {error, nodes, "--clock instructions counts the node under test alone: give 1"};
        {_, _, _, [{B, K} | _]} ->
            {error, overrides, lists:flatten(io_lib:format(
                                 "~s: ~s: --clock instructions counts one scheduler on one "
                                 "node: give 1", [B, K]))};
        _ when Profiled ->
            {error, profile, "--profile runs perf on the nodes: not with --clock instructions"};
        _ -> {ok, Config#{schedulers := [1], sample := false}}
    end;
check(Config, _Given) -> {ok, Config}.

one(L) -> L =:= [1].
