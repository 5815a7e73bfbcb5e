%% @doc Releases compared within one run, pure: when a run's erls are several OTP releases (or
%% flavours: `--otp 25,27 --emu-flavor jit,emu'), each other erl against the first, the oldest
%% release by its number, at every benchmark, argument set, scheduler and node count both ran:
%% the ratio of medians OTHER / BASE (below 1: OTHER is faster) with its 95 % interval and
%% significance, as `beamscale compare' says it for two runs (beamscale_stats_compare).
-module(beamscale_stats_otp).

-export([compare/1, compare/2, counts/1, unread/1]).
-export_type([pair/0]).

%% The columns of a sample row that say which reading it is, not what was read.
-define(NOT_FIGURES, [benchmark, env, args, node, time, t_s, interval_s, status]).

-type pair() :: #{base := binary(), other := binary(),
                  results := [beamscale_stats_compare:result()]}.

%% @doc The pairs of a run's measurements, with default options; none with one erl.
-spec compare([beamscale_stats:measurement()]) -> [pair()].
compare(Rows) -> compare(Rows, #{}).

%% @doc As `compare/1', with the statistics' options.
-spec compare([beamscale_stats:measurement()], beamscale_stats:options()) -> [pair()].
compare(Rows, Opts) ->
    case lists:sort(fun older/2, lists:usort([otp(R) || R <- Rows])) of
        [Base | Others] ->
            [#{base => Base, other => O,
               results => beamscale_stats_compare:compare(of_erl(Base, Rows), of_erl(O, Rows),
                                                          Opts)} || O <- Others];
        [] -> []
    end.

otp(#{otp := O}) -> iolist_to_binary(O).

%% @doc The pairs of a run's instruction counts (per key, launch by launch; the key's fourth
%% element its erl), each other erl against the oldest, per key both counted
%% (`beamscale_stats_instr:compare_runs/2': fewer instructions is faster); none with one erl.
-spec counts(beamscale_stats_instr:counts(tuple())) ->
    [#{base := binary(), other := binary(),
       results := [beamscale_stats_instr:run_result(tuple())]}].
counts(Counts) ->
    case lists:sort(fun older/2, lists:usort([element(4, K) || K <- maps:keys(Counts)])) of
        [Base | Others] ->
            Of = fun(E) -> maps:from_list([{setelement(4, K, <<>>), V}
                                           || {K, V} <- maps:to_list(Counts), element(4, K) =:= E])
                 end,
            [#{base => Base, other => O,
               results => beamscale_stats_instr:compare_runs(Of(Base), Of(O))} || O <- Others];
        [] -> []
    end.

%% @doc Which of the sampler's figures an erl did not give: the erls of `samples.csv''s rows
%% (oldest first) and, per column some erl read and another left empty in all its `ok' rows,
%% those others (a figure a release does not have is marked so, not read as 0). Columns no erl
%% read (the hosts' columns of a run without `monitors') are not this run's figures.
-spec unread([#{atom() => binary()}]) -> {[binary()], [{atom(), [binary()]}]}.
unread(Samples) ->
    Ok = [{erl(R), R} || #{status := <<"ok">>} = R <- Samples],
    case lists:sort(fun older/2, lists:usort([E || {E, _} <- Ok])) of
        [_, _ | _] = Erls ->
            Read = lists:usort([{E, K} || {E, R} <- Ok, {K, V} <- maps:to_list(R), V =/= <<>>]),
            Figures = lists:usort([K || {_, K} <- Read]) -- ?NOT_FIGURES,
            {Erls, [{F, Without} || F <- Figures,
                                    Without <- [[E || E <- Erls,
                                                      not lists:member({E, F}, Read)]],
                                    Without =/= []]};
        Erls -> {Erls, []}
    end.

%% A sample row's erl: the first field of its environment key.
erl(#{env := Env}) -> hd(binary:split(Env, <<"/">>)).

%% The erl's rows with its name taken out of the key, so the other erl's rows match them.
of_erl(Name, Rows) -> [R#{otp := <<>>} || R <- Rows, otp(R) =:= Name].

%% `25' before `27' before `27-emu'; names that are no release (paths' aliases) after, by name.
older(A, B) -> order(A) =< order(B).

order(Name) ->
    case string:to_integer(Name) of
        {N, Rest} when is_integer(N) -> {0, N, Rest};
        _ -> {1, 0, Name}
    end.
