%% @doc `beamscale study pollset': the keep-alive HTTP server (`beamscale_target_http') under the
%% built-in load generator across IO-polling configurations (`+IOt', `+IOp', `+IOs', see
%% examples/smp_io.config) and scheduler counts, after the 2012 pollset-per-scheduler thread
%% (seeds/pollset-per-scheduler-thread-2012.txt): requests per second and latency per
%% configuration. When `wrk' is installed it also drives each configuration's server for the
%% hold time with a fixed number of connections (a closed model): `wrk.csv'.
%% docs/studies/pollset.md.
-module(beamscale_study_pollset).
-behaviour(beamscale_study).

-export([info/0, run/1, run/2, format_error/1, cells/3, sizes/1, polling/0]).

-define(WRK_CONNECTIONS, 50).
%% A wrk run ends after its -d seconds; beyond this many more it is stuck and is killed.
-define(WRK_GRACE_S, 30).

%% @doc This study's name and summary.
-spec info() -> beamscale_study:info().
info() ->
    #{name => "pollset", summary => "keep-alive HTTP requests/s and latency across +IOt, +IOp, "
                                    "+IOs and scheduler counts",
      options => [profile]}.

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
    ok = beamscale_store:write_file(beamscale_format_rundir:path(Dir, study_json),
                                    beamscale_format_json:encode(Meta)),
    Seed = maps:get(seed, Opts, erlang:unique_integer([positive])),
    Wrk = case os:find_executable("wrk") of
              false -> none;
              Exe -> {Exe, Dir}
          end,
    Ctx = maps:merge(#{dir => Dir, quiet => Quiet, seed => Seed}, maps:with([web, profile], Opts)),
    case beamscale_study_levels:run(cells(P, polling(), Wrk), Ctx) of
        {ok, _Failed} ->
            Rows = beamscale_store:read_rows(beamscale_format_rundir:path(Dir, levels)),
            [WrkRows, Caps] = [beamscale_store:read_rows(beamscale_format_rundir:path(Dir, F))
                               || F <- [wrk, capacity]],
            ok = beamscale_store:write_file(beamscale_format_rundir:path(Dir, index),
                                            beamscale_report_pollset:html(
                                              Meta, Rows, WrkRows, Caps,
                                              beamscale_profile:read_levels(Dir))),
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

%% @doc The sizes: requests per session (one keep-alive connection each), the first session rate
%% of each cell's capacity search, its hold, scheduler counts, and the search
%% (`beamscale_study_levels'). `test' runs one level per cell (its highest rate is its first).
-spec sizes(beamscale_study_smp_io:size()) -> map().
sizes(test) ->
    #{requests => 20, rates => [20], hold_s => 1, schedulers => [1], polling => ["io_t1",
                                                                               "io_t2_p2"],
      search => #{factor => 2, tolerance => 0.2, max_rate => 20, budget_s => 30}};
sizes(short) ->
    #{requests => 50, rates => [40], hold_s => 3, schedulers => sched_counts(),
      polling => all,
      search => #{factor => 2, tolerance => 0.2, max_rate => 100000, budget_s => 36}};
sizes(intermediate) ->
    #{requests => 100, rates => [20], hold_s => 10, schedulers => sched_counts(),
      polling => all,
      search => #{factor => 2, tolerance => 0.1, max_rate => 100000, budget_s => 180}};
sizes(long) ->
    #{requests => 100, rates => [20], hold_s => 30, schedulers => sched_counts(),
      polling => all,
      search => #{factor => 2, tolerance => 0.05, max_rate => 100000, budget_s => 600}}.

sched_counts() -> lists:usort([1, erlang:system_info(logical_processors)]).

%% @doc One cell per polling configuration and scheduler count; with `{WrkPath, Dir}' each
%% also runs wrk once its levels are done.
-spec cells(map(), [{string(), string(), string()}], none | {string(), file:filename()}) ->
    [beamscale_study_levels:cell()].
cells(#{requests := N, rates := Rates, hold_s := Hold, schedulers := Scheds, polling := Names} = P,
      Polling, Wrk) ->
    Timeout = (Hold + max(2, Hold)) * 1000 + 5000,
    [wrk_hook(Wrk, Hold, searched(P,
              #{target => "http", op => "get", config => Name ++ "/s" ++ integer_to_list(S),
                erl => "erl", flags => Flags, schedulers => S, setup => [], kind => http,
                steps => [{loop, N, [{http, #{path => "/", timeout_ms => Timeout}}]}],
                levels => [#{rate => R, hold_s => Hold, ops => N} || R <- Rates]}))
     || {Name, Flags, _} <- Polling, Names =:= all orelse lists:member(Name, Names),
        S <- Scheds].

%% With a search, the first rate is where it starts; the cell's levels are the search's.
searched(#{search := S, rates := [Start | _], hold_s := Hold, requests := N}, Cell) ->
    Cell#{levels := [], search => S#{start => Start, hold_s => Hold, ops => N}};
searched(_P, Cell) -> Cell.

wrk_hook(none, _Hold, Cell) -> Cell;
wrk_hook({Exe, Dir}, Hold, #{config := Config} = Cell) ->
    Cell#{after_levels => fun(Target) -> wrk(Exe, Dir, Config, Hold, Target) end}.

%% One wrk run of `Secs' seconds against the server, appended to wrk.csv.
wrk(Exe, Dir, Config, Secs, #{host := Host, port := Port}) ->
    Args = ["-t1", "-c" ++ integer_to_list(?WRK_CONNECTIONS),
            "-d" ++ integer_to_list(Secs) ++ "s", "--timeout", "2s", "--latency",
            "http://" ++ Host ++ ":" ++ integer_to_list(Port) ++ "/"],
    Row = case beamscale_os:cmd(Exe, Args, (Secs + ?WRK_GRACE_S) * 1000) of
              {0, Out} -> wrk_row(Config, beamscale_format_wrk:parse(Out));
              _ -> wrk_row(Config, {error, no_result})
          end,
    {_, Fd} = beamscale_store:open_csv(beamscale_format_rundir:path(Dir, wrk),
                                       [config, status | beamscale_format_wrk:columns()]),
    ok = file:write(Fd, beamscale_format_csv:line(Row)),
    file:close(Fd).

wrk_row(Config, {ok, F}) -> [Config, ok | [maps:get(K, F, <<>>) || K <- wrk_columns()]];
wrk_row(Config, {error, _}) -> [Config, failed | [<<>> || _ <- wrk_columns()]].

meta(Size, #{requests := N, hold_s := Hold}) ->
    #{study => <<"pollset">>, size => Size, ops_per_session => N, hold_s => Hold,
      otp_release => list_to_binary(erlang:system_info(otp_release)),
      logical_cores => erlang:system_info(logical_processors),
      wrk => os:find_executable("wrk") =/= false, wrk_connections => ?WRK_CONNECTIONS,
      configs => [#{config => list_to_binary(C), flags => list_to_binary(F),
                    thesis => list_to_binary(W), erl => <<"erl">>} || {C, F, W} <- polling()]}.

wrk_columns() -> beamscale_format_wrk:columns().
