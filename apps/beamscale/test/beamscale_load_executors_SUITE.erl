%% k6's executors through `beamscale load', each against a server of known capacity
%% (beamscale_target_workers: 32 workers, 50 ms a request, one request a session), checked on
%% its defining property: the arrival rate of an open one, the users busy of a closed one, the
%% iterations of an iterations one, the iterations dropped when too few users are allowed, and
%% an externally controlled one following `beamscale ctl DIR users N'.
-module(beamscale_load_executors_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([constant_rate/1, dropped/1, constant_users/1, ramping_users/1, per_user/1, shared/1,
         external/1, refused/1]).
-export([constant_rate/0, dropped/0, constant_users/0, ramping_users/0, per_user/0, shared/0,
         external/0, refused/0]).

-define(SERVICE_MS, 50).

suite() -> [{timetrap, {minutes, 3}}].

all() -> [constant_rate, dropped, constant_users, ramping_users, per_user, shared, external,
          refused].

init_per_suite(Config) -> Config.

end_per_suite(_Config) ->
    ok = beamscale_test_cli:no_strays().

load(Config, Name, Phase) ->
    Priv = ?config(priv_dir, Config),
    File = scenario(Priv, Name, Phase),
    Result = beamscale_test_cli:run(["load", File, "--name", Name, "--out", Priv, "--quiet"]),
    Summary = case Result of
                  {0, _} -> summary(filename:join(Priv, Name));
                  _ -> none
              end,
    {Result, Summary}.

scenario(Priv, Name, Phase) ->
    File = filename:join(Priv, Name ++ ".scenario"),
    ok = file:write_file(File, io_lib:format(
        "{targets, [{sut, #{start => #{erl => \"erl\", flags => \"+sbwt none\",~n"
        "    init => {beamscale_target_workers, start, [32, ~b]}}}}]}.~n"
        "{phases, [{main, ~ts}]}.~n"
        "{sessions, [{one, #{steps => [{rpc, #{call => {beamscale_target_workers, request, []},~n"
        "                                      timeout_ms => 5000}}]}}]}.~n"
        "{drain_s, 2}.~n", [?SERVICE_MS, Phase])),
    File.

summary(Dir) ->
    {ok, Bin} = file:read_file(filename:join(Dir, "summary.json")),
    {ok, S} = beamscale_format_json:decode(Bin),
    S.

count(S, K) -> maps:get(K, maps:get(<<"counts">>, S), 0).

constant_rate() -> [{doc, "constant_arrival_rate 40/s for 3 s with users enough: 120 "
                     "iterations, none dropped, the arrival rate within 5 %."}].
constant_rate(Config) ->
    {{0, _}, S} = load(Config, "constant_rate",
                       "#{executor => constant_arrival_rate, rate => 40, duration_s => 3, "
                       "pre_allocated => 20}"),
    #{<<"sessions_started">> := Started, <<"per_second">> := Secs} = S,
    ?assertEqual(120, count(S, <<"offered_iterations">>)),
    ?assertEqual(0, count(S, <<"dropped_iterations">>)),
    ?assertEqual(120, Started),
    %% Each of the three seconds started its 40, against the clock.
    [?assert(abs(N - 40) =< 2) || #{<<"t_s">> := T, <<"sessions_started">> := N} <- Secs,
                                  T =< 3].

dropped() -> [{doc, "ramping_arrival_rate 0 to 100/s over 4 s with at most 2 users in flight "
               "(40 sessions/s at 50 ms): dropped = offered - started within 2 %, and at least "
               "what the 2 users could not take."}].
dropped(Config) ->
    {{0, _}, S} = load(Config, "dropped",
                       "#{executor => ramping_arrival_rate, start_rate => 0, "
                       "stages => [{4, 100}], pre_allocated => 2}"),
    Offered = count(S, <<"offered_iterations">>),
    Dropped = count(S, <<"dropped_iterations">>),
    Started = maps:get(<<"sessions_started">>, S),
    ?assertEqual(200, Offered),
    ?assert(abs(Dropped - (Offered - Started)) =< 0.02 * Offered),
    %% Two users of 50 ms sessions start at most 2 * 4 s / 50 ms + 2 sessions in 4 s.
    Capacity = 2 * 4000 div ?SERVICE_MS + 2,
    ?assert(Started =< Capacity),
    ?assert(Dropped >= Offered - Capacity).

constant_users() -> [{doc, "constant_users 5 for 3 s: at the end of each second before the "
                      "last, within 1 of 5 users in flight; sessions back to back."}].
constant_users(Config) ->
    {{0, _}, S} = load(Config, "constant_users",
                       "#{executor => constant_users, users => 5, duration_s => 3}"),
    %% The last second ends with the phase: whether its in-flight sessions finish inside that
    %% second or after it is a race (a fresh-clone proof read [5, 5, 1]), so it is left out.
    InFlight = in_flight(S, 2),
    ?assertEqual(2, length(InFlight)),
    [?assert(abs(N - 5) =< 1) || N <- InFlight],
    %% Five users, 50 ms each, 3 s: far more than five sessions (back to back, not one each).
    ?assert(maps:get(<<"sessions_done">>, S) > 50).

%% Sessions in flight at the end of each of the first `Last' seconds.
in_flight(#{<<"per_second">> := Secs}, Last) ->
    {InFlight, _} = lists:mapfoldl(
                      fun(#{<<"sessions_started">> := A, <<"sessions_done">> := D}, Acc) ->
                              {Acc + A - D, Acc + A - D}
                      end, 0, [X || #{<<"t_s">> := T} = X <- Secs, T =< Last]),
    ct:log("in flight at the end of each second: ~p", [InFlight]),
    InFlight.

ramping_users() -> [{doc, "ramping_users 0 to 6 over 3 s, then 6 for 1 s: within 1 of the "
                     "target (2, 4, 6) at the end of each second before the last."}].
ramping_users(Config) ->
    {{0, _}, S} = load(Config, "ramping_users",
                       "#{executor => ramping_users, start_users => 0, "
                       "stages => [{3, 6}, {1, 6}]}"),
    %% The last second, which ends with the phase, is left out as in constant_users.
    InFlight = in_flight(S, 3),
    ?assertEqual(3, length(InFlight)),
    [?assert(abs(N - Target) =< 1) || {N, Target} <- lists:zip(InFlight, [2, 4, 6])].

per_user() -> [{doc, "per_user_iterations 4 users x 5: exactly 20 sessions, all done, well "
                "before the 10 s bound."}].
per_user(Config) ->
    {{0, _}, S} = load(Config, "per_user",
                       "#{executor => per_user_iterations, users => 4, iterations => 5, "
                       "duration_s => 10}"),
    ?assertMatch(#{<<"sessions_started">> := 20, <<"sessions_done">> := 20}, S),
    ?assert(maps:get(<<"duration_s">>, S) < 10).

shared() -> [{doc, "shared_iterations 3 users, 10 iterations: exactly 10 sessions."}].
shared(Config) ->
    {{0, _}, S} = load(Config, "shared",
                       "#{executor => shared_iterations, users => 3, iterations => 10, "
                       "duration_s => 10}"),
    ?assertMatch(#{<<"sessions_started">> := 10, <<"sessions_done">> := 10}, S).

external() -> [{doc, "externally_controlled from 3 users (at most 10) for 14 s: ctl users 8, "
                "then 2; the users in flight follow each within 1 (a second after the change); "
                "users 11 and rate 5 refused in words; no session starts after the 14 s."}].
external(Config) ->
    Priv = ?config(priv_dir, Config),
    File = scenario(Priv, "external", "#{executor => externally_controlled, users => 3, "
                                      "max_users => 10, duration_s => 14}"),
    Dir = filename:join(Priv, "external"),
    Load = beamscale_test_cli:open(["load", File, "--name", "external", "--out", Priv,
                                    "--quiet"]),
    {os_pid, OsPid} = erlang:port_info(Load, os_pid),
    %% A failure while it runs must not leave the load behind: SIGTERM ends it.
    try steer_users(Dir, Load)
    after
        _ = erlang:port_info(Load) =:= undefined
            orelse os:cmd("kill " ++ integer_to_list(OsPid))
    end,
    S = summary(Dir),
    ?assertMatch(#{<<"stopped">> := <<"done">>}, S),
    [T8, T2] = [T || #{<<"event">> := E, <<"t_s">> := T} <- maps:get(<<"events">>, S),
                     E =:= <<"users 8">> orelse E =:= <<"users 2">>],
    Secs = lists:zip(lists:seq(1, 13), in_flight(S, 13)),
    %% Each number held for at least a second's end, past a second for the change to take.
    Windows = [{3, 0, T8}, {8, T8 + 1, T2}, {2, T2 + 1, 13}],
    [begin
         In = [N || {T, N} <- Secs, T >= From, T =< To],
         ct:log("target ~b from ~.1f to ~.1f s: ~w", [Target, float(From), float(To), In]),
         ?assertNotEqual([], In),
         [?assert(abs(N - Target) =< 1) || N <- In]
     end || {Target, From, To} <- Windows],
    %% The phase ends at 14 s: nothing starts after it, every user is done.
    Started = [{T, N} || #{<<"t_s">> := T, <<"sessions_started">> := N}
                             <- maps:get(<<"per_second">>, S)],
    ?assertEqual([], [X || {T, N} = X <- Started, T > 14, N > 0]),
    ?assertMatch([{14, N}] when N > 0, [X || {14, _} = X <- Started]),
    ?assertEqual(maps:get(<<"sessions_started">>, S), maps:get(<<"sessions_done">>, S)).

steer_users(Dir, Load) ->
    CtlJson = filename:join(Dir, "ctl.json"),
    ok = beamscale_test_load:wait_for(fun() -> filelib:is_regular(CtlJson) end, 60000),
    Ctl = fun(Words) -> beamscale_test_cli:run(["ctl", Dir | Words]) end,
    %% ctl.json comes just before the load: past its first second, at 3 users, before a change.
    ok = beamscale_test_load:wait_for(fun() -> seconds_in(Ctl(["status"])) > 1.2 end, 30000),
    {1, Above} = Ctl(["users", "11"]),
    ?assertMatch({match, _}, re:run(Above, "users 11 is above phase main's max_users, 10")),
    {1, Rate} = Ctl(["rate", "5"]),
    ?assertMatch({match, _}, re:run(Rate, "phase main is run by externally_controlled")),
    {0, Eight} = Ctl(["users", "8"]),
    ?assertMatch({match, _}, re:run(Eight, "users set 8 of at most 10")),
    timer:sleep(3000),
    {0, _} = Ctl(["users", "2"]),
    {0, _} = beamscale_test_cli:wait(Load, 60000),
    ok.

%% The seconds into the load `ctl status' says (`3.4 s, phase main, ...'), 0 before it runs.
seconds_in({0, Status}) ->
    {match, [T]} = re:run(Status, "^([0-9.]+) s,", [{capture, all_but_first, binary}]),
    binary_to_float(T);
seconds_in({_, _}) -> 0.0.

refused() -> [{doc, "A bad executor option: one line naming the file, line and key, exit 2."}].
refused(Config) ->
    {{2, Text}, none} = load(Config, "refused",
                             "#{executor => constant_arrival_rate, rate => 40, "
                             "duration_s => 3, pre_allocated => 5, max_users => 2}"),
    ?assertMatch({match, _}, re:run(Text, "refused.scenario:3: key phases.main.max_users: "
                                          "is at least pre_allocated")).
