%% Many users on one box: users from two source addresses reach a real server on loopback, which
%% sees both as peers; memory per user is reported; a run whose users would pass the file limit
%% of the process holding them is refused before the load (exit 2, naming the limit).
-module(beamscale_load_users_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([two_source_addresses/1, above_file_limit/1]).
-export([two_source_addresses/0, above_file_limit/0]).

%% The server's wait for a request line: tests end well within it.
-define(RECV_TIMEOUT, 10000).
%% The test's wait for the server's list of peers.
-define(PEERS_TIMEOUT, 5000).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [two_source_addresses, above_file_limit].

init_per_suite(Config) ->
    {ok, _} = beamscale_node:distribute(),
    Config.

end_per_suite(_Config) -> ok.

two_source_addresses() ->
    [{doc, "Users bind 127.0.0.2 and 127.0.0.3 in turn; the server sees both peers."}].
two_source_addresses(Config) ->
    {Server, Port} = server(),
    Dir = filename:join(?config(priv_dir, Config), "sources"),
    try
        S = beamscale_test_load:scenario(Config, "sources.scenario", io_lib:format(
              "{targets, [{web, #{address => \"127.0.0.1:~b\"}}]}.\n"
              "{phases, [{p, #{duration_s => 2, rate => 20, max_users => 20}}]}.\n"
              "{sessions, [{s, #{steps => [{http, #{}}, {think, 100}, {http, #{}}]}}]}.\n"
              "{source_ips, [\"127.0.0.2\", \"127.0.0.3\"]}.\n{drain_s, 3}.\n", [Port])),
        {ok, Dir, _} = beamscale_loadtest:run(S, #{dir => Dir, quiet => true, seed => 5}),
        Sum = beamscale_test_load:json(Dir, "summary.json"),
        #{<<"sessions_done">> := 20, <<"requests">> := 40, <<"errors">> := 0} = Sum,
        %% beamscale's reachability check of a host:port target comes from 127.0.0.1, once.
        {Check, Peers} = lists:partition(fun(P) -> P =:= {127, 0, 0, 1} end, peers(Server)),
        ct:pal("peers seen by the server: ~p (and the check: ~p)", [Peers, Check]),
        ?assertEqual(1, length(Check)),
        ?assertEqual([{127, 0, 0, 2}, {127, 0, 0, 3}], lists:usort(Peers)),
        %% Round robin: each address has half of the users' connections.
        ?assertEqual(10, length([P || P <- Peers, P =:= {127, 0, 0, 2}])),
        #{<<"memory">> := #{<<"users_in_flight">> := Users, <<"bytes_per_user">> := B}} = Sum,
        ?assert(Users > 0 andalso Users =< 20),
        ?assert(B > 0)
    after
        exit(Server, kill)
    end.

above_file_limit() ->
    [{doc, "max_users above this process's file limit: exit 2 before the load, with the limit."}].
above_file_limit(Config) ->
    {ok, Limit} = beamscale_loadtest_files:limit(node()),
    ?assert(is_integer(Limit)),
    {Server, Port} = server(),
    Text = io_lib:format(
             "{targets, [{web, #{address => \"127.0.0.1:~b\"}}]}.\n"
             "{phases, [{p, #{duration_s => 10, rate => ~b, max_users => ~b}}]}.\n"
             "{sessions, [{s, #{steps => [{http, #{}}, {think, 60000}, {http, #{}}]}}]}.\n",
             [Port, Limit, Limit + 1000]),
    try
        S = beamscale_test_load:scenario(Config, "many.scenario", Text),
        Dir = filename:join(?config(priv_dir, Config), "many"),
        {error, Reason} = beamscale_loadtest:run(S, #{dir => Dir, quiet => true}),
        Msg = beamscale_error:format(Reason),
        ct:pal("~ts", [Msg]),
        Expected = io_lib:format("above its limit of ~b (ulimit -n)", [Limit]),
        ?assertNotEqual(nomatch, string:find(Msg, Expected)),
        ?assertNotEqual(nomatch, string:find(Msg, "set load_nodes to at least 2")),
        %% The command exits 2, and no user reached the server (only the reachability checks
        %% of the two runs, from 127.0.0.1).
        File = filename:join(?config(priv_dir, Config), "many.scenario"),
        %% A name and directory of its own: CT's priv_dir is shared by the suites of a run, and
        %% an existing run directory is refused (exit 2 too, but before the check meant here).
        Out = filename:join(?config(priv_dir, Config), "users_suite"),
        ?assertEqual(2, beamscale_cli:dispatch(["load", File, "--quiet", "--name", "above_limit",
                                                "--out", Out])),
        ?assertEqual([{127, 0, 0, 1}, {127, 0, 0, 1}], peers_after(Server, 2, ?PEERS_TIMEOUT))
    after
        exit(Server, kill)
    end.

%% A keep-alive HTTP server on 127.0.0.1 that notes each connection's peer address.
server() ->
    Self = self(),
    Pid = spawn(fun() ->
                        {ok, L} = gen_tcp:listen(0, [binary, {ip, {127, 0, 0, 1}},
                                                     {active, false}, {reuseaddr, true},
                                                     {backlog, 128}]),
                        {ok, Port} = inet:port(L),
                        Self ! {port, self(), Port},
                        Acceptor = self(),
                        spawn_link(fun() -> accept(L, Acceptor) end),
                        collect([])
                end),
    receive {port, Pid, Port} -> {Pid, Port} end.

collect(Peers) ->
    receive
        {peer, P} -> collect([P | Peers]);
        {peers, From} -> From ! {peers, self(), lists:reverse(Peers)}, collect(Peers)
    end.

accept(L, Collector) ->
    {ok, S} = gen_tcp:accept(L),
    {ok, {Addr, _}} = inet:peername(S),
    Collector ! {peer, Addr},
    H = spawn(fun() -> receive go -> serve(S) end end),
    ok = gen_tcp:controlling_process(S, H),
    H ! go,
    accept(L, Collector).

serve(S) ->
    case gen_tcp:recv(S, 0, ?RECV_TIMEOUT) of
        {ok, _Request} ->
            ok = gen_tcp:send(S, <<"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok">>),
            serve(S);
        {error, _} -> gen_tcp:close(S)
    end.

%% The server notes a connection once its acceptor runs, which may be after the client has
%% gone on: wait for `N' peers (at most `Ms'), then a moment more for any late extra one.
peers_after(Server, N, Ms) when Ms > 0 ->
    case length(peers(Server)) < N of
        true -> timer:sleep(100), peers_after(Server, N, Ms - 100);
        false -> timer:sleep(300), peers(Server)
    end;
peers_after(Server, _N, _Ms) -> peers(Server).

peers(Server) ->
    Server ! {peers, self()},
    receive {peers, Server, Peers} -> Peers
    after ?PEERS_TIMEOUT -> ct:fail("the test server did not answer")
    end.
