%% `beamscale ctl' steering a real load, as a user runs both commands: a load of a server of a
%% known service time (beamscale_target_workers) with its live page, then status, a new rate,
%% users added and ended, a bad command, the page's token and a wrong one, and stop; the
%% changes are in events.csv, summary.json, load.csv's offered rate and the page's marks; the
%% users ended count as stopped (started = done + stopped).
-module(beamscale_cmd_ctl_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").
-include_lib("kernel/include/file.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([steered/1]).
-export([steered/0]).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [steered].

init_per_suite(Config) -> [{user, beamscale_test_user:create()} | Config].

end_per_suite(Config) ->
    ok = beamscale_test_user:remove(?config(user, Config)),
    ok = beamscale_test_cli:no_strays().

%% A long phase: the test stops it.
scenario(Priv) ->
    File = filename:join(Priv, "steer.scenario"),
    ok = file:write_file(File,
        "{targets, [{sut, #{start => #{erl => \"erl\", flags => \"+sbwt none\",\n"
        "    init => {beamscale_target_workers, start, [64, 20]}}}}]}.\n"
        "{phases, [{main, #{duration_s => 60, rate => 10}}]}.\n"
        "{sessions, [{one, #{steps => [{rpc, #{call => {beamscale_target_workers, request, []},"
        " timeout_ms => 5000}}, {think, 500},\n"
        "    {rpc, #{call => {beamscale_target_workers, request, []}}}]}}]}.\n"
        "{drain_s, 2}.\n"),
    File.

ctl(Dir, Words) -> beamscale_test_cli:run(["ctl", Dir | Words]).

steered() -> [{doc, "A running load steered from the command and the page's endpoint."}].
steered(Config) ->
    Priv = ?config(priv_dir, Config),
    Dir = filename:join(Priv, "steer"),
    Load = beamscale_test_cli:open(["load", scenario(Priv), "--name", "steer", "--out", Priv,
                                    "--web", "0", "--quiet"]),
    {os_pid, OsPid} = erlang:port_info(Load, os_pid),
    %% A failure before the stop must not leave the load running: SIGTERM ends it.
    try steer(Dir, Load, ?config(user, Config))
    after
        %% Still open: the load did not exit (a port closes with its exit status).
        _ = erlang:port_info(Load) =:= undefined
            orelse os:cmd("kill " ++ integer_to_list(OsPid))
    end.

steer(Dir, Load, User) ->
    Ctl = filename:join(Dir, "ctl.json"),
    ok = beamscale_test_load:wait_for(fun() -> filelib:is_regular(Ctl) end, 60000),
    {ok, #file_info{mode = Mode}} = file:read_file_info(Ctl),
    ?assertEqual(8#600, Mode band 8#777),
    {Us, {0, Status}} = timer:tc(fun() -> ctl(Dir, ["status"]) end),
    ct:pal("ctl status alone: ~.2f s (a loaded host)", [Us / 1.0e6]),
    ?assertMatch({match, _}, re:run(Status, "phase main, rate 10.0 users/s, users in flight")),
    {0, _} = ctl(Dir, ["rate", "40"]),
    {0, _} = ctl(Dir, ["users", "+5"]),
    {0, _} = ctl(Dir, ["users", "-2"]),
    {2, Bad} = ctl(Dir, ["rate", "fast"]),
    ?assertMatch({match, _}, re:run(Bad, "not a command: rate fast")),
    %% The page holds the token its buttons send; another token is refused.
    {ok, #{<<"url">> := Url, <<"token">> := Token}} =
        beamscale_format_json:decode(element(2, file:read_file(Ctl))),
    #{port := Port} = uri_string:parse(Url),
    {200, Page} = http(Port, "GET", "/", [], <<>>),
    ?assertNotEqual(nomatch, binary:match(Page, <<"data-token=\"", Token/binary, "\"">>)),
    {403, _} = http(Port, "POST", "/control", [{"X-Beamscale-Token", "0"}], <<"stop">>),
    {200, Answer} = http(Port, "POST", "/control", [{"X-Beamscale-Token", Token}],
                         <<"status">>),
    ?assertMatch({match, _}, re:run(Answer, "rate 40.0 users/s")),
    not_steered_by(User, Dir, Port, Token),
    %% Seconds at the new rate, then stop: as SIGTERM, every file written.
    timer:sleep(2500),
    {0, Stopping} = ctl(Dir, ["stop"]),
    ?assertMatch({match, _}, re:run(Stopping, "stopping")),
    {143, _} = beamscale_test_cli:wait(Load, 60000),
    ?assertNot(filelib:is_regular(Ctl)),
    {2, Gone} = ctl(Dir, ["status"]),
    ?assertMatch({match, _}, re:run(Gone, "no load is running there")),
    {ok, Events} = file:read_file(filename:join(Dir, "events.csv")),
    [<<"t_s,event">> | Rows] = binary:split(Events, <<"\n">>, [global, trim]),
    ?assertEqual([<<"rate 40">>, <<"users +5">>, <<"users -2">>, <<"stop">>],
                 [lists:last(binary:split(R, <<",">>)) || R <- Rows]),
    Summary = beamscale_test_load:json(Dir, "summary.json"),
    ?assertMatch(#{<<"stopped">> := <<"interrupted">>}, Summary),
    %% `users -2' ended two users in flight: stopped, not done, and none left in flight after
    %% the drain (their sessions take about 0.5 s, the drain 2 s).
    #{<<"sessions_started">> := Started, <<"sessions_done">> := Done,
      <<"sessions_stopped">> := Stopped} = Summary,
    ?assertEqual(2, Stopped),
    ?assertEqual(Started, Done + Stopped),
    ?assertEqual(4, length(maps:get(<<"events">>, Summary))),
    {ok, Csv} = file:read_file(filename:join(Dir, "load.csv")),
    ?assertNotEqual(nomatch, binary:match(Csv, <<",main,40.0,">>)),
    {ok, Html} = file:read_file(filename:join(Dir, "index.html")),
    ?assertNotEqual(nomatch, binary:match(Html, <<"rate 40">>)),
    ?assertNotEqual(nomatch, binary:match(Html, <<"users +5">>)).

%% Another local user, even with the token, neither reads the page (nor the token) nor steers;
%% 1 000 of its idle connections are closed by the server, and `ctl' is answered meanwhile.
not_steered_by(User, Dir, Port, Token) ->
    Ctl = filename:join(Dir, "ctl.json"),
    ?assertEqual(ok, beamscale_test_private:check(Ctl, User)),
    Url = "http://127.0.0.1:" ++ integer_to_list(Port),
    Curl = ["curl", "-s", "-m", "10", "-w", "\n%{http_code}"],
    {0, Page} = beamscale_test_user:run(User, Curl ++ [Url ++ "/"], 20000),
    ?assertMatch({match, _}, re:run(Page, "not the run's user.*\n403$", [dotall])),
    ?assertEqual(nomatch, binary:match(Page, Token)),
    {0, Stop} = beamscale_test_user:run(User, Curl ++ ["-H", "X-Beamscale-Token: " ++
                                                   binary_to_list(Token),
                                                   "--data-binary", "stop",
                                                   Url ++ "/control"], 20000),
    ?assertMatch({match, _}, re:run(Stop, "\n403$")),
    Idle = beamscale_test_user:open(User, ["erl", "-noshell", "-eval", idle_clients(),
                                           "-extra", integer_to_list(Port)]),
    {{match, [Open]}, Before} = wait_line(Idle, "open (\\d+)", <<>>),
    {Us, {0, Status}} = timer:tc(fun() -> ctl(Dir, ["status"]) end),
    ct:pal("ctl status beside ~ts idle connections of another user: ~.2f s (a loaded host)",
           [Open, Us / 1.0e6]),
    ?assertMatch({match, _}, re:run(Status, "phase main")),
    {0, After} = beamscale_test_user:wait(Idle, 60000),
    ?assertMatch({match, _}, re:run([Before, After], ["closed by the server ", Open, "\n"])),
    ?assert(binary_to_integer(Open) >= 900).

%% 1 000 connections opened and left idle; each read until the server closes it (20 s at most).
idle_clients() ->
    "[P] = init:get_plain_arguments(),"
    "Ss = [S || _ <- lists:seq(1, 1000), {ok, S} <- [gen_tcp:connect({127,0,0,1},"
    " list_to_integer(P), [binary, {active, false}], 5000)]],"
    "io:format(\"open ~b~n\", [length(Ss)]),"
    "Closed = fun C(S) -> case gen_tcp:recv(S, 0, 20000) of {ok, _} -> C(S);"
    " {error, closed} -> true; _ -> false end end,"
    "io:format(\"closed by the server ~b~n\", [length([S || S <- Ss, Closed(S)])]),"
    "halt().".

wait_line(Port, Re, Acc) ->
    receive
        {Port, {data, D}} ->
            Acc1 = <<Acc/binary, D/binary>>,
            case re:run(Acc1, Re, [{capture, all_but_first, binary}]) of
                nomatch -> wait_line(Port, Re, Acc1);
                Match -> {Match, Acc1}
            end;
        {Port, {exit_status, S}} -> error({exited, S, Acc})
    after 60000 -> error({no_line, Re, Acc})
    end.

%% One HTTP/1.1 request to the load's server: status and body.
http(Port, Method, Path, Headers, Body) ->
    {ok, S} = gen_tcp:connect({127, 0, 0, 1}, Port, [binary, {active, false}], 5000),
    ok = gen_tcp:send(S, [Method, " ", Path, " HTTP/1.1\r\nHost: 127.0.0.1:",
                          integer_to_list(Port), "\r\n",
                          [[K, ": ", V, "\r\n"] || {K, V} <- Headers],
                          "Content-Length: ", integer_to_list(byte_size(Body)), "\r\n\r\n",
                          Body]),
    Reply = recv_all(S, <<>>),
    ok = gen_tcp:close(S),
    [<<"HTTP/1.1 ", Code:3/binary, _/binary>>, Rest] = binary:split(Reply, <<"\r\n">>),
    [_, RespBody] = binary:split(Rest, <<"\r\n\r\n">>),
    {binary_to_integer(Code), RespBody}.

recv_all(S, Acc) ->
    case gen_tcp:recv(S, 0, 10000) of
        {ok, D} -> recv_all(S, <<Acc/binary, D/binary>>);
        {error, closed} -> Acc
    end.
