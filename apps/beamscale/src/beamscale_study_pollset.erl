%% @doc `beamscale study pollset': the keep-alive HTTP server (`beamscale_target_http') under the
%% built-in load generator across IO-polling configurations (`+IOt', `+IOp', `+IOs', see
%% examples/smp_io.config) and scheduler counts, after the 2012 pollset-per-scheduler thread
%% (seeds/pollset-per-scheduler-thread-2012.txt): requests per second and latency per
%% configuration. `wrk' is not used yet (the report says so); docs/studies/pollset.md.
-module(beamscale_study_pollset).
-behaviour(beamscale_study).

-export([info/0, run/1, run/2, format_error/1, cells/2, sizes/1, polling/0]).

%% @doc This study's name and summary.
-spec info() -> beamscale_study:info().
info() ->
    #{name => "pollset", summary => "keep-alive HTTP requests/s and latency across +IOt, +IOp, "
                                    "+IOs and scheduler counts"}.

%% @doc Run the study at the size of `--version'.
-spec run(beamscale_study:opts()) -> {ok, file:filename()} | {error, term()}.
run(#{version := V} = Opts) -> run(Opts, V).

%% @doc Run the study at a given size (`test' for the test suites).
-spec run(beamscale_study:opts(), beamscale_study_smp_io:size()) ->
    {ok, file:filename()} | {error, term()}.
run(#{out := Out, name := Name, quiet := Quiet} = Opts, Size) ->
    Dir = filename:absname(filename:join(Out, Name)),
    ok = filelib:ensure_path(Dir),
    P0 = sizes(Size),
    P = case Opts of
            #{schedulers := S} -> P0#{schedulers := S};
            _ -> P0
        end,
    Meta = meta(Size, P),
    ok = beamscale_store:write_file(filename:join(Dir, "study.json"), beamscale_json:encode(Meta)),
    Seed = maps:get(seed, Opts, erlang:unique_integer([positive])),
    case beamscale_study_levels:run(cells(P, polling()), #{dir => Dir, quiet => Quiet,
                                                           seed => Seed}) of
        {ok, _Failed} ->
            Rows = beamscale_store:read_rows(filename:join(Dir, "levels.csv")),
            ok = beamscale_store:write_file(filename:join(Dir, "index.html"),
                                            beamscale_report_pollset:html(Meta, Rows)),
            {ok, Dir};
        {error, _} = Error -> Error
    end.

%% @doc One line for an error.
-spec format_error(term()) -> iodata().
format_error(R) -> beamscale_study_levels:format_error(R).

%% @doc The IO-polling configurations: name, flags, what varies.
-spec polling() -> [{string(), string(), string()}].
polling() ->
    [{"io_t1", "+IOt 1", "one poll thread, schedulers poll too (the default)"},
     {"io_t2", "+IOt 2", "two poll threads, one pollset"},
     {"io_t2_p2", "+IOt 2 +IOp 2", "two poll threads, two pollsets"},
     {"io_no_sched_poll", "+IOs false", "only the poll thread polls"}].

%% @doc The sizes: requests per session (one keep-alive connection each), session rates, hold,
%% scheduler counts.
-spec sizes(beamscale_study_smp_io:size()) -> map().
sizes(test) ->
    #{requests => 20, rates => [20], hold_s => 1, schedulers => [1], polling => ["io_t1",
                                                                               "io_t2_p2"]};
sizes(short) ->
    #{requests => 50, rates => [40, 120, 240], hold_s => 3, schedulers => sched_counts(),
      polling => all};
sizes(intermediate) ->
    #{requests => 100, rates => [20, 60, 120, 200], hold_s => 10, schedulers => sched_counts(),
      polling => all};
sizes(long) ->
    #{requests => 100, rates => [20, 60, 120, 200, 300, 400], hold_s => 30,
      schedulers => sched_counts(), polling => all}.

sched_counts() -> lists:usort([1, erlang:system_info(logical_processors)]).

%% @doc One cell per polling configuration and scheduler count.
-spec cells(map(), [{string(), string(), string()}]) -> [beamscale_study_levels:cell()].
cells(#{requests := N, rates := Rates, hold_s := Hold, schedulers := Scheds, polling := Names},
      Polling) ->
    Timeout = (Hold + max(2, Hold)) * 1000 + 5000,
    [#{target => "http", op => "get", config => Name ++ "/s" ++ integer_to_list(S), erl => "erl",
       flags => Flags, schedulers => S, setup => [], kind => http,
       steps => [{loop, N, [{http, #{path => "/", timeout_ms => Timeout}}]}],
       levels => [#{rate => R, hold_s => Hold, ops => N} || R <- Rates]}
     || {Name, Flags, _} <- Polling, Names =:= all orelse lists:member(Name, Names),
        S <- Scheds].

meta(Size, #{requests := N, hold_s := Hold}) ->
    #{study => <<"pollset">>, size => Size, ops_per_session => N, hold_s => Hold,
      otp_release => list_to_binary(erlang:system_info(otp_release)),
      logical_cores => erlang:system_info(logical_processors),
      wrk => os:find_executable("wrk") =/= false,
      configs => [#{config => list_to_binary(C), flags => list_to_binary(F),
                    thesis => list_to_binary(W), erl => <<"erl">>} || {C, F, W} <- polling()]}.
