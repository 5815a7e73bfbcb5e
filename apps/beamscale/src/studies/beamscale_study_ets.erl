%% @doc `beamscale study ets': the ETS scalability study (2013) on today's OTP. One ordinary run
%% of `ets_bench' (config, plan, coordinator; resumable like any run) over two kinds of flag sets:
%% `matrix' runs every table type, concurrency option, mix and bucket-lock count with the default
%% reader groups (paper figures 4–12, 20–22), and `rg1' ... `rg64' run the reader-group sets under
%% `+rg N' (figures 13–18). The benchmark picks its argument sets from the plain argument
%% `-ets_bench matrix | reader_groups' the flag set carries. The run page's ETS section
%% (`report_section/1', drawn by `beamscale_report_ets') shows the figures. See docs/studies/ets.md.
-module(beamscale_study_ets).
-behaviour(beamscale_study).

-export([info/0, run/1, run/2, format_error/1, flag_sets/2, report_section/1]).
-export_type([extra/0]).

%% Test knobs: sizes divided further, fewer iterations and reader-group counts.
-type extra() :: #{divisor => pos_integer(), iterations => pos_integer(),
                   warmups => non_neg_integer(), reader_groups => [pos_integer()]}.

-define(READER_GROUPS, [1, 2, 4, 8, 16, 32, 64]).
-define(ITERATIONS, 3).
-define(WARMUPS, 1).
%% One launch per cell, as before launches: the study's figures (docs/studies.md) are of one
%% launch, and its cells are read as curves, not gated one by one.
-define(LAUNCHES, 1).

%% @doc The study's name and one line.
-spec info() -> beamscale_study:info().
info() ->
    #{name => "ets",
      summary => "ETS scalability (2013): table types, concurrency options, reader groups, "
                 "bucket locks",
      options => [otp]}.

%% @doc Run the study at the options' size and write its report.
-spec run(beamscale_study:opts()) -> {ok, file:filename()} | {error, term()}.
run(Opts) -> run(Opts, #{}).

%% @doc Run the study with test knobs (see `extra()').
-spec run(beamscale_study:opts(), extra()) -> {ok, file:filename()} | {error, term()}.
run(#{version := Version, name := Name, out := Out} = Opts, Extra0) ->
    Extra = maps:merge(#{divisor => 1, iterations => ?ITERATIONS, warmups => ?WARMUPS,
                         reader_groups => ?READER_GROUPS}, Extra0),
    Overrides = [{benchmarks, [ets_bench]}, {version, Version}, {name, Name}, {out, Out},
                 {erl_args, flag_sets(maps:get(seed, Opts, undefined), Extra)},
                 {iterations, maps:get(iterations, Extra)}, {warmups, maps:get(warmups, Extra)},
                 {launches, ?LAUNCHES}]
        ++ [{schedulers, S} || {ok, S} <- [maps:find(schedulers, Opts)]]
        ++ [{erls, E} || {ok, E} <- [maps:find(erls, Opts)]],
    case beamscale_config:load(undefined, Overrides) of
        {ok, Config} ->
            Quiet = maps:get(quiet, Opts, false),
            ok = case Quiet of
                     true -> ok;
                     false -> announce(Config)
                 end,
            run_config(Config, Quiet);
        {error, _} = Error -> Error
    end.

%% @doc One line for this study's errors: all are other modules' (config, coordinator,
%% writer), said by them through `beamscale_error'.
-spec format_error(term()) -> iodata().
format_error(Reason) -> ["ets study: ", beamscale_error:format(Reason)].

%% @doc The run page's ETS section (`beamscale_report_ets'), in any run with `ets_bench' rows.
-spec report_section([beamscale_stats:row()]) -> beamscale_report_run:section() | none.
report_section(Rows) ->
    case beamscale_report_ets:section(Rows) of
        [] -> none;
        Ets -> {"The ETS study (ets_bench)", Ets}
    end.

%% @doc The flag sets of the study: `matrix' and one `rgN' per reader-group count, each telling
%% the benchmark which argument sets to give (and the seed and divisor, when not the default).
%% The lock counts are those this erl gives as asked, decided here once: on a node under test
%% with one scheduler no lock count can be seen.
-spec flag_sets(integer() | undefined, extra()) -> [{atom(), string()}].
flag_sets(Seed, Extra) ->
    Common = [[" -ets_bench_seed ", integer_to_list(Seed)] || Seed =/= undefined]
        ++ [[" -ets_bench_divisor ", integer_to_list(D)]
            || D <- [maps:get(divisor, Extra, 1)], D =/= 1],
    Locks = lists:join(",", [integer_to_list(N) || N <- honoured_locks()]),
    [{matrix, lists:flatten(["-ets_bench matrix -ets_bench_locks ", Locks | Common])}
     | [{list_to_atom("rg" ++ integer_to_list(N)),
         lists:flatten(["+rg ", integer_to_list(N), " -ets_bench reader_groups" | Common])}
        || N <- maps:get(reader_groups, Extra, ?READER_GROUPS)]].

%%% Internals

run_config(Config, Quiet) ->
    Mode = case Quiet of
               true -> quiet;
               false -> beamscale_progress:mode()
           end,
    case beamscale_coordinator:run(Config, Mode) of
        {ok, #{dir := Dir, failures := Failures}} ->
            ok = case Quiet orelse Failures =:= 0 of
                     true -> ok;
                     false -> io:format("~b iterations failed (see ~ts)~n",
                                        [Failures, beamscale_format_rundir:path(Dir, failures)])
                 end,
            case beamscale_writer:write(Dir) of
                {ok, _Index} -> {ok, Dir};
                {error, _} = Error -> Error
            end;
        {error, _} = Error -> Error
    end.

%% What will run, and which of the paper's settings this erl does not honour.
announce(#{version := Version, schedulers := Ss, erl_args := Sets}) ->
    io:format("ets study, ~s size, schedulers ~w, flag sets ~s~n",
              [Version, Ss, lists:join(", ", [atom_to_list(A) || {A, _} <- Sets])]),
    Refused = [{T, O} || T <- [set, ordered_set], O <- beamscale_bench_ets_workload:options(T),
                         not beamscale_bench_ets_bench:accepted(T, O)],
    _ = [io:format("  this OTP refuses ~p with ~0p: left out~n", [T, O]) || {T, O} <- Refused],
    case beamscale_bench_ets_workload:lock_counts() -- honoured_locks() of
        [] -> ok;
        Not ->
            io:format("  bucket locks ~w: this erl does not give a set table that many: "
                      "left out~n", [Not])
    end,
    io:format("  note: with one scheduler OTP turns write_concurrency off; the 1-scheduler "
              "points have one lock per table whatever the option~n").

%% The lock counts a set table gets exactly as asked from this erl (the one the study runs).
%% The probe needs more than one scheduler; with one, every count is kept.
honoured_locks() ->
    Counts = beamscale_bench_ets_workload:lock_counts(),
    case erlang:system_info(schedulers) of
        1 -> [N || N <- Counts, beamscale_bench_ets_bench:accepted(set, {locks, N})];
        _ -> [N || N <- Counts, beamscale_bench_ets_bench:honoured(set, {locks, N})]
    end.
