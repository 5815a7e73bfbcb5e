%% Tsung's http_distributed.xml as its authors wrote it, but for its probabilities (30 + 30: Tsung
%% refuses them too), its file_server's file (made where the file names it) and its clients'
%% `<ip>'s (rewritten to addresses of this suite's own network namespace). Its client machines
%% `myhost' (1 emulator) and `myhost2' (cpu="2"), its servers `myserver', `linuxit02' and
%% `localhost:8080' are names, resolved inside the namespace as Tsung's users set up theirs: the
%% namespace's /etc/hosts and ssh_config (`ip netns exec' mounts /etc/netns/NS/ over /etc), an
%% sshd reached as those hosts, nginx as those servers. `%%symbol:new%%' calls a module on the
%% command's code path, sent to the load nodes. All traffic stays inside the namespace, which the
%% case removes (with every process in it) even when it fails (beamscale_load_test_netns).
-module(beamscale_load_netns_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-import(beamscale_load_test_netns, [ip/1, etc/1, exec_ok/2]).

-export([all/0, suite/0]).
-export([http_distributed/0, http_distributed/1]).

-define(EXAMPLE, "/usr/share/doc/tsung/examples/http_distributed.xml.gz").
%% bsv0 holds the servers and the command's node; bsv1 the client hosts and their <ip>s.
-define(SERVER, "10.200.1.1").
-define(MYHOST, "10.200.1.2").
-define(MYHOST2, "10.200.1.4").
-define(IPS, [{"192.168.2.223", "10.200.1.2"}, {"192.168.2.224", "10.200.1.3"},
              {"192.168.2.225", "10.200.1.5"}]).
-define(UP_MS, 15000).
%% The path of the test's own requests (whether nginx is up), left out of the log's lines.
-define(PROBE, "/probe").
%% Seconds of load before the run is interrupted (its phases last an hour each).
-define(LOAD_S, 10).
-define(EXIT_MS, 120000).

suite() -> [{timetrap, {minutes, 4}}].

all() -> [http_distributed].

http_distributed() -> [{doc, "Tsung's http_distributed.xml: load nodes on its client hosts over "
                             "ssh, their own <ip>s, servers by name, in a namespace."}].
http_distributed(Config) ->
    Ns = "bsdist" ++ os:getpid(),
    Dir = filename:join(?config(priv_dir, Config), "netns_distributed"),
    ok = filelib:ensure_path(Dir),
    try
        network(Ns),
        Procs = [sshd(Ns, Dir), nginx(Ns, Dir)],
        %% One epmd for the namespace's three "hosts", on all their addresses, as each host's
        %% own would be (the command's node would start one on its address alone).
        ip(["netns", "exec", Ns, "epmd", "-daemon", "-address",
            string:join(["127.0.0.1", ?SERVER, ?MYHOST, ?MYHOST2], ",")]),
        File = example(Dir),
        {Status, Out} = run(Ns, Dir, File),
        ct:pal("~ts", [Out]),
        ?assertEqual(143, Status),
        check(Dir),
        [beamscale_load_test_netns:stop(P) || P <- Procs]
    after
        beamscale_load_test_netns:remove(Ns)
    end,
    ?assertNot(lists:member(Ns, beamscale_load_test_netns:list())).

check(Dir) ->
    Sum = beamscale_test_load:json(filename:join(Dir, "run"), "summary.json"),
    #{<<"errors">> := Errors, <<"sessions_started">> := Started,
      <<"load_nodes">> := Nodes} = Sum,
    ct:pal("~b sessions started; errors ~p; nodes ~p", [Started, Errors, Nodes]),
    ?assertEqual(0, Errors),
    ?assertEqual([<<"myhost">>, <<"myhost2">>, <<"myhost2">>],
                 lists:sort([lists:last(binary:split(N, <<"@">>)) || #{<<"node">> := N} <- Nodes])),
    Log = lines(Dir, "access.log"),
    ?assertEqual(maps:get(<<"requests">>, Sum), length(Log) + length(lines(Dir, "body.log"))),
    %% Every request from a client host's own <ip>, with one of the file's User-Agents.
    Sources = [list_to_binary(To) || {_, To} <- ?IPS],
    [?assert(lists:member(From, Sources)) || [From | _] <- Log],
    ?assertEqual([true, true], [lists:any(fun([F | _]) -> lists:member(F, S) end, Log)
                                || S <- [lists:droplast(Sources), [lists:last(Sources)]]]),
    [?assertMatch({match, _}, re:run(UA, "^Mozilla/5.0 \\((X11|Windows)")) || [_, _, _, UA] <- Log],
    %% Tsung sends a relative url to the server of the absolute one before it (linuxit02).
    Hosts = lists:usort([{H, R} || [_, H, R, _] <- Log]),
    ct:pal("~p", [Hosts]),
    [?assertEqual(<<"linuxit02">>, H) || {H, <<"GET /images/accueil2/", _/binary>>} <- Hosts],
    [?assertEqual(<<"myserver">>, H) || {H, <<"GET /images/icon1.gif", _/binary>>} <- Hosts],
    ?assert(lists:keymember(<<"linuxit02">>, 1, Hosts) andalso
            lists:keymember(<<"myserver">>, 1, Hosts)),
    %% The SOAP calls to localhost:8080, with the value of %%symbol:new%%.
    Soap = lines(Dir, "body.log"),
    ct:pal("~b SOAP calls", [length(Soap)]),
    [?assertMatch([_, <<"localhost">>, <<"EchoService">>, _], L) || L <- Soap],
    [?assert(lists:member(From, Sources)) || [From | _] <- Soap],
    [?assertMatch({match, _}, re:run(B, "<symbol>sym42</symbol>")) || [_, _, _, B] <- Soap].

lines(Dir, Name) ->
    case file:read_file(filename:join(Dir, Name)) of
        {ok, B} -> [binary:split(L, <<"|">>, [global])
                    || L <- binary:split(B, <<"\n">>, [global]), L =/= <<>>,
                       binary:match(L, <<"GET " ?PROBE " ">>) =:= nomatch];
        {error, enoent} -> []
    end.

%% ---- the example, rewritten ----

example(Dir) ->
    {ok, Gz} = file:read_file(?EXAMPLE),
    Rules = [{<<"probability=\"30\"">>, <<"probability=\"50\"">>}
             | [{list_to_binary(A), list_to_binary(B)} || {A, B} <- ?IPS]],
    Xml = lists:foldl(fun({A, B}, X) -> binary:replace(X, A, B, [global]) end,
                      zlib:gunzip(Gz), Rules),
    File = filename:join(Dir, "http_distributed.xml"),
    ok = file:write_file(File, Xml),
    %% The file_server's file where the example names it, beside it.
    Csv = filename:join([Dir, "src", "test", "test_file_server.csv"]),
    ok = filelib:ensure_dir(Csv),
    ok = file:write_file(Csv, <<"user1;pass1\n">>),
    Sym = filename:join(Dir, "symbol.erl"),
    ok = file:write_file(Sym, <<"-module(symbol).\n-export([new/1]).\n"
                                "new(_Vars) -> <<\"sym42\">>.\n">>),
    {ok, symbol} = compile:file(Sym, [{outdir, Dir}]),
    File.

%% `beamscale load' in the namespace; after ?LOAD_S seconds of load (load.csv's rows), SIGTERM.
run(Ns, Dir, File) ->
    [Erl | Args] = beamscale_test_cli:command(
                     ["load", File, "--name", "run", "--out", Dir, "--seed", "3",
                      "--dist-address", ?SERVER]),
    Port = open_port({spawn_executable, os:find_executable("ip")},
                     [{args, ["netns", "exec", Ns, Erl, "-pa", Dir | Args]}, {cd, Dir},
                      exit_status, binary, stderr_to_stdout]),
    {os_pid, OsPid} = erlang:port_info(Port, os_pid),
    Out = rows(Port, filename:join([Dir, "run", "load.csv"]), ?LOAD_S, ?EXIT_MS, <<>>),
    "" = os:cmd("kill -TERM " ++ integer_to_list(OsPid)),
    {Status, More} = beamscale_test_cli:wait(Port, ?EXIT_MS),
    {Status, binary_to_list(Out) ++ More}.

%% The command's output once load.csv has `N' rows; the command ending first fails the case.
rows(_Port, _Csv, _N, Left, Out) when Left =< 0 -> ct:fail("no load after 120 s: ~ts", [Out]);
rows(Port, Csv, N, Left, Out) ->
    Rows = case file:read_file(Csv) of
               {ok, B} -> length(binary:matches(B, <<"\n">>)) - 1;
               {error, _} -> 0
           end,
    receive
        {Port, {data, D}} -> rows(Port, Csv, N, Left, <<Out/binary, D/binary>>);
        {Port, {exit_status, S}} -> ct:fail("beamscale load ended (~b) before ~b s of load: ~ts",
                                            [S, N, Out])
    after 250 ->
        case Rows >= N of
            true -> Out;
            false -> rows(Port, Csv, N, Left - 250, Out)
        end
    end.

%% ---- the namespace and its servers ----

%% lo, and a veth pair: bsv0 with the servers' address, bsv1 with the client hosts' and theirs.
network(Ns) ->
    beamscale_load_test_netns:add(Ns),
    Addrs = [{"bsv0", ?SERVER}, {"bsv1", ?MYHOST}, {"bsv1", ?MYHOST2}]
        ++ [{"bsv1", To} || {_, To} <- ?IPS, To =/= ?MYHOST],
    [ip(["-n", Ns | C])
     || C <- [["link", "add", "bsv0", "type", "veth", "peer", "name", "bsv1"]]
            ++ [["addr", "add", A ++ "/24", "dev", D] || {D, A} <- Addrs]
            ++ [["link", "set", "bsv0", "up"], ["link", "set", "bsv1", "up"]]],
    Etc = etc(Ns),
    ok = filelib:ensure_path(filename:join(Etc, "ssh")),
    ok = file:write_file(filename:join(Etc, "hosts"),
                         ["127.0.0.1 localhost\n", ?SERVER, " myserver linuxit02\n",
                          ?MYHOST, " myhost\n", ?MYHOST2, " myhost2\n"]).

%% sshd on the client hosts' addresses, port 22 of the namespace.
sshd(Ns, Dir) -> beamscale_load_test_netns:ssh_as(Ns, Dir, [?MYHOST, ?MYHOST2], "myhost2").

%% nginx as myserver and linuxit02 (port 80) and localhost:8080; a SOAP body is logged as it
%% passes on to a sink (nginx reads a body only to pass it on).
nginx(Ns, Dir) ->
    P = beamscale_load_test_netns:nginx(Ns, Dir, io_lib:format(
      " log_format who '$remote_addr|$host|$request|$http_user_agent';\n"
      " log_format body '$remote_addr|$host|$http_soapaction|$request_body';\n"
      " server {\n  listen ~s:80;\n  listen 127.0.0.1:8080;\n"
      "  access_log ~ts/access.log who;\n"
      "  location /axis/ { access_log ~ts/body.log body; proxy_pass http://127.0.0.1:8081/; }\n"
      "  location / { return 200 \"ok\"; }\n }\n"
      " server {\n  listen 127.0.0.1:8081;\n  access_log off;\n  return 200 \"ok\";\n }\n",
      [?SERVER, Dir, Dir]), 80),
    %% The servers' names resolved in the namespace (its /etc/hosts).
    up(fun() -> exec_ok(Ns, "curl -sf -o /dev/null http://linuxit02" ?PROBE) end, "nginx"),
    P.

%% `Fun()' true within ?UP_MS, else the case fails naming `What'.
up(Fun, What) ->
    case beamscale_load_test_netns:wait_until(Fun, ?UP_MS) of
        ok -> ok;
        timeout -> ct:fail("~ts did not answer in the namespace", [What])
    end.
