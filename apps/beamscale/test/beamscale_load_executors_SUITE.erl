%% k6's executors through `beamscale load', each against a server of known capacity
%% (beamscale_target_workers: 32 workers, 50 ms a request, one request a session), checked on
%% its defining property: the arrival rate of an open one, the users busy of a closed one, the
%% iterations of an iterations one, and the iterations dropped when too few users are allowed.
-module(beamscale_load_executors_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([constant_rate/1, dropped/1, constant_users/1, ramping_users/1, per_user/1, shared/1,
         refused/1]).
-export([constant_rate/0, dropped/0, constant_users/0, ramping_users/0, per_user/0, shared/0,
         refused/0]).

-define(SERVICE_MS, 50).

suite() -> [{timetrap, {minutes, 3}}].

all() -> [constant_rate, dropped, constant_users, ramping_users, per_user, shared, refused].

init_per_suite(Config) -> Config.

end_per_suite(_Config) ->
    ok = beamscale_test_cli:no_strays().

load(Config, Name, Phase) ->
    Priv = ?config(priv_dir, Config),
    File = filename:join(Priv, Name ++ ".scenario"),
    ok = file:write_file(File, io_lib:format(
        "{targets, [{sut, #{start => #{erl => \"erl\", flags => \"+sbwt none\",~n"
        "    init => {beamscale_target_workers, start, [32, ~b]}}}}]}.~n"
        "{phases, [{main, ~ts}]}.~n"
        "{sessions, [{one, #{steps => [{rpc, #{call => {beamscale_target_workers, request, []},~n"
        "                                      timeout_ms => 5000}}]}}]}.~n"
        "{drain_s, 2}.~n", [?SERVICE_MS, Phase])),
    Result = beamscale_test_cli:run(["load", File, "--name", Name, "--out", Priv, "--quiet"]),
    Summary = case Result of
                  {0, _} -> summary(filename:join(Priv, Name));
                  _ -> none
              end,
    {Result, Summary}.

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

constant_users() -> [{doc, "constant_users 5 for 3 s: at the end of each second, within 1 of "
                      "5 users in flight; sessions back to back."}].
constant_users(Config) ->
    {{0, _}, S} = load(Config, "constant_users",
                       "#{executor => constant_users, users => 5, duration_s => 3}"),
    InFlight = in_flight(S, 3),
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
                     "target (2, 4, 6, 6) at the end of each second."}].
ramping_users(Config) ->
    {{0, _}, S} = load(Config, "ramping_users",
                       "#{executor => ramping_users, start_users => 0, "
                       "stages => [{3, 6}, {1, 6}]}"),
    InFlight = in_flight(S, 4),
    ?assertEqual(4, length(InFlight)),
    [?assert(abs(N - Target) =< 1) || {N, Target} <- lists:zip(InFlight, [2, 4, 6, 6])].

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

refused() -> [{doc, "A bad executor option: one line naming the file, line and key, exit 2."}].
refused(Config) ->
    {{2, Text}, none} = load(Config, "refused",
                             "#{executor => constant_arrival_rate, rate => 40, "
                             "duration_s => 3, pre_allocated => 5, max_users => 2}"),
    ?assertMatch({match, _}, re:run(Text, "refused.scenario:3: key phases.main.max_users: "
                                          "is at least pre_allocated")).
