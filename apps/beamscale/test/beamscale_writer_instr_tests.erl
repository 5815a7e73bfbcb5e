%% summary.csv of a run directory: the instruction columns of a counted run (its
%% instructions.csv), empty for a run of the time clock.
-module(beamscale_writer_instr_tests).
-include_lib("eunit/include/eunit.hrl").

-define(COLUMNS, [<<"instructions_median">>, <<"instructions_min">>, <<"instructions_max">>,
                  <<"instructions_spread">>]).

%% Three launches of one key: the figures are over the launches' least counts (1000, 990,
%% 1005), whatever the launches' other samples; the key without counts has empty columns.
counted_test() ->
    with_dir(fun(Dir) ->
        beamscale_rundir_fixture:write(Dir, #{benches => [{<<"b">>, <<"a">>, 1.0}],
                                              schedulers => [1, 2], clock => instructions}),
        Counts = [{1, 1, 1000}, {1, 2, 1010}, {2, 1, 1200}, {2, 2, 990}, {3, 1, 1005}],
        ok = file:write_file(
               filename:join(Dir, "instructions.csv"),
               [beamscale_format_csv:line([benchmark, phase, args, otp, erl_args, schedulers,
                                           nodes, launch, sample, instructions])
                | [beamscale_format_csv:line([b, b, a, otp, default, 1, 1, L, S, X])
                   || {L, S, X} <- Counts]]),
        [One, Two] = summary(Dir),
        ?assertMatch(#{<<"schedulers">> := <<"1">>}, One),
        ?assertEqual([1000.0, 990.0, 1005.0, 0.015], [number(maps:get(C, One)) || C <- ?COLUMNS]),
        ?assertEqual([<<>>, <<>>, <<>>, <<>>], [maps:get(C, Two) || C <- ?COLUMNS])
    end).

%% The time clock: the columns are there (after the others) and empty.
time_clock_test() ->
    with_dir(fun(Dir) ->
        beamscale_rundir_fixture:write(Dir, #{benches => [{<<"b">>, <<"a">>, 1.0}],
                                              schedulers => [1]}),
        [Row] = summary(Dir),
        ?assertEqual([<<>>, <<>>, <<>>, <<>>], [maps:get(C, Row) || C <- ?COLUMNS]),
        Header = [atom_to_binary(H) || H <- beamscale_report_summary:header()],
        ?assertEqual(?COLUMNS, lists:nthtail(length(Header) - 4, Header))
    end).

summary(Dir) ->
    {ok, _} = beamscale_writer:write(Dir),
    {ok, Bin} = file:read_file(filename:join(Dir, "summary.csv")),
    {[Header | Rows], _} = beamscale_format_csv:parse(Bin),
    [maps:from_list(lists:zip(Header, R)) || R <- Rows].

number(Bin) -> float(beamscale_format_csv:number(Bin)).

with_dir(Fun) ->
    Dir = filename:join("/tmp", "beamscale-writer-instr-" ++ os:getpid() ++ "-"
                        ++ integer_to_list(erlang:unique_integer([positive]))),
    ok = filelib:ensure_path(Dir),
    try Fun(Dir)
    after file:del_dir_r(Dir)
    end.
