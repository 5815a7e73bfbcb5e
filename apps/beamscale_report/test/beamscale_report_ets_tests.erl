%% The ETS section of the report: which figures, which series, from summary rows.
-module(beamscale_report_ets_tests).
-include_lib("eunit/include/eunit.hrl").

-define(R, beamscale_report_ets).

row(Args, Phase, Flags, S, Median) ->
    #{benchmark => <<"ets_bench">>, phase => Phase, args => Args, otp => <<"default">>,
      erl_args => Flags, schedulers => S, nodes => 1, median => Median,
      ci95_low => Median * 0.9, ci95_high => Median * 1.1}.

args(Type, Option, Mix) ->
    iolist_to_binary(io_lib:format("~0p", [[Type, Option, Mix, {16, 256, 1}]])).

rows() ->
    [row(args(T, O, M), P, F, S, 1.0 / S)
     || {T, O, M, F} <- [{set, rw, 90, <<"matrix">>}, {set, none, 90, <<"matrix">>},
                         {set, {locks, 256}, 90, <<"matrix">>},
                         {set, {locks, 1024}, 90, <<"matrix">>},
                         {ordered_set, rw, 99, <<"matrix">>},
                         {set, rw, 90, <<"rg1">>}, {set, rw, 90, <<"rg16">>},
                         {set, rw, 90, <<"rg4">>}],
        P <- [<<"insert">>, <<"access">>, <<"delete">>], S <- [1, 2]].

figures_test() ->
    Figs = ?R:figures(rows()),
    Titles = [H || {H, _} <- Figs],
    ?assertEqual(4, length(Titles)),
    [{_, Options}, {_, Phases}, {_, Rg}, {_, Locks}] = Figs,
    %% Options: set 90 (none, rw) and ordered_set 99 (rw); locks are not options.
    ?assertEqual([{<<"ordered_set, 99 % lookups: options">>, [<<"rw">>]},
                  {<<"set, 90 % lookups: options">>, [<<"none">>, <<"rw">>]}],
                 [{T, [L || {L, _} <- S]} || {T, S} <- Options]),
    ?assertEqual(4, length(Phases)),
    %% Reader groups in numeric order, the plain flag set last.
    [{_, RgSeries}] = Rg,
    ?assertEqual([<<"+rg 1">>, <<"+rg 4">>, <<"+rg 16">>, <<"default +rg">>],
                 [L || {L, _} <- RgSeries]),
    [{_, LockSeries}] = Locks,
    ?assertEqual([<<"rw (default locks)">>, <<"256 locks">>, <<"1024 locks">>],
                 [L || {L, _} <- LockSeries]),
    [{_, Points} | _] = LockSeries,
    ?assertEqual([{1, 1.0, 0.9, 1.1}, {2, 0.5, 0.45, 0.55}], Points).

other_rows_test() ->
    Other = [(row(<<"[1]">>, <<"big">>, <<"default">>, 1, 1.0))#{benchmark => <<"big">>},
             row(<<"[not, closed">>, <<"access">>, <<"matrix">>, 1, 1.0)],
    ?assertEqual([], ?R:figures(Other)),
    ?assertEqual([], ?R:section(Other)).

section_test() ->
    Html = iolist_to_binary(?R:section(rows())),
    Svgs = length(binary:matches(Html, <<"<svg">>)),
    ?assertEqual(lists:sum([length(Fs) || {_, Fs} <- ?R:figures(rows())]), Svgs),
    ?assertNotEqual(nomatch, binary:match(Html, <<"debug_hash_fixed_number_of_locks">>)).
