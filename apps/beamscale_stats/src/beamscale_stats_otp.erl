%% @doc Releases compared within one run, pure: when a run's erls are several OTP releases (or
%% flavours: `--otp 25,27 --emu-flavor jit,emu'), each other erl against the first, the oldest
%% release by its number, at every benchmark, argument set, scheduler and node count both ran:
%% the ratio of medians OTHER / BASE (below 1: OTHER is faster) with its 95 % interval and
%% significance, as `beamscale compare' says it for two runs (beamscale_stats_compare).
-module(beamscale_stats_otp).

-export([compare/1, compare/2]).
-export_type([pair/0]).

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

%% The erl's rows with its name taken out of the key, so the other erl's rows match them.
of_erl(Name, Rows) -> [R#{otp := <<>>} || R <- Rows, otp(R) =:= Name].

%% `25' before `27' before `27-emu'; names that are no release (paths' aliases) after, by name.
older(A, B) -> order(A) =< order(B).

order(Name) ->
    case string:to_integer(Name) of
        {N, Rest} when is_integer(N) -> {0, N, Rest};
        _ -> {1, 0, Name}
    end.
