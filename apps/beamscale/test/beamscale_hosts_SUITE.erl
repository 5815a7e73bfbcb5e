%% Load and benchmark nodes on other hosts, with no outside network: network namespaces this
%% suite makes stand for the machines. A hub namespace is "this host" (beamscale's command, its
%% epmd, an nginx target on 10.213.0.1); three others are joined to it by veth pairs
%% (10.213.N.0/30, nothing routed beyond them), each with an sshd of its own (test-made keys).
%% Distribution is over TLS with test-made certificates. Everything is removed after: sshd and
%% nginx by pid, what else runs in the namespaces (their epmd) by pid, the namespaces by name
%% (beamscale_load_test_netns).
-module(beamscale_hosts_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-import(beamscale_load_test_netns, [ip/1, pids/1, wait_until/2]).

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([load_on_two_hosts/1, bench_nodes_on_a_host/1]).
-export([load_on_two_hosts/0, bench_nodes_on_a_host/0]).

-define(HUB, "10.213.0.1").
%% The leaf namespaces: load nodes in a and b, benchmark nodes in d.
-define(LEAVES, [{a, 1}, {b, 2}, {d, 3}]).
-define(HTTP_PORT, 8080).
%% openssl makes a key in milliseconds; a loaded host may take seconds.
-define(UP_TIMEOUT_MS, 20000).
%% A load of 3 s plus node starts through ssh (each a login and an emulator boot).
-define(RUN_TIMEOUT_MS, 180000).
%% A node stopped a moment ago may still be on its way out.
-define(GONE_TIMEOUT_MS, 10000).

suite() -> [{timetrap, {minutes, 8}}].

all() -> [load_on_two_hosts, bench_nodes_on_a_host].

init_per_suite(Config) ->
    Dir = filename:join(?config(priv_dir, Config), "beamscale_hosts_SUITE"),
    ok = filelib:ensure_path(Dir),
    Tag = string:lowercase(binary_to_list(binary:encode_hex(crypto:strong_rand_bytes(3)))),
    Names = maps:from_list([{K, "bsh" ++ Tag ++ atom_to_list(K)}
                            || K <- [h | [L || {L, _} <- ?LEAVES]]]),
    Config1 = [{dir, Dir}, {ns, Names} | Config],
    try
        make_network(Names),
        Ssh = beamscale_load_test_netns:ssh_keys(Dir),
        Tls = tls_files(Dir),
        Sshds = [{L, beamscale_load_test_netns:sshd(maps:get(L, Names), Dir, [leaf(N)],
                                                    atom_to_list(L))}
                 || {L, N} <- ?LEAVES],
        Nginx = nginx(Dir, maps:get(h, Names)),
        [{ssh_args, Ssh}, {tls, Tls}, {servers, [Nginx | [P || {_, P} <- Sshds]]} | Config1]
    catch Class:Reason:Stack ->
        end_per_suite(Config1),
        erlang:raise(Class, Reason, Stack)
    end.

end_per_suite(Config) ->
    [beamscale_load_test_netns:stop(S) || S <- proplists:get_value(servers, Config, [])],
    %% Whatever else runs in the namespaces is ours (the nodes' epmd): by pid, then the names.
    Names = maps:values(?config(ns, Config)),
    [beamscale_load_test_netns:remove(N) || N <- Names],
    ?assertEqual([], [N || N <- Names, lists:member(N, beamscale_load_test_netns:list())]),
    ok.

%% Users of a 3 s load run on load nodes in two other namespaces (weights 3 and 1), against
%% nginx on the hub's address; beamscale's distribution on that address, over TLS.
load_on_two_hosts() ->
    [{doc, "Load nodes on two namespaces through ssh, TLS distribution: shares by weight."}].
load_on_two_hosts(Config) ->
    Dir = filename:join(?config(dir, Config), "load"),
    Args = ?config(ssh_args, Config),
    Scenario = filename:join(?config(dir, Config), "hosts.scenario"),
    ok = file:write_file(Scenario, io_lib:format(
        "{targets, [{web, #{address => \"~s:~b\"}}]}.\n"
        "{phases, [{p, #{duration_s => 3, rate => 40}}]}.\n"
        "{sessions, [{s, #{steps => [{http, #{path => \"/\"}}]}}]}.\n"
        "{load_nodes, [{\"~s\", #{args => ~0p, weight => 3}}, {\"~s\", #{args => ~0p}}]}.\n"
        "{sample, []}.\n{drain_s, 3}.\n", [?HUB, ?HTTP_PORT, leaf(1), Args, leaf(2), Args])),
    {0, Out} = beamscale(Config, ["load", Scenario, "--dist-address", ?HUB, "--quiet",
                                  "--out", filename:dirname(Dir), "--name", "load"]),
    ct:pal("~ts", [Out]),
    Sum = beamscale_test_load:json(Dir, "summary.json"),
    #{<<"errors">> := 0, <<"sessions_done">> := Done, <<"load_nodes">> := Nodes} = Sum,
    PerHost = maps:from_list([{lists:last(string:split(binary_to_list(N), "@")), D}
                              || #{<<"node">> := N, <<"sessions_done">> := D} <- Nodes]),
    ct:pal("~b sessions (offered 120): ~p", [Done, PerHost]),
    ?assertEqual([leaf(1), leaf(2)], lists:sort(maps:keys(PerHost))),
    ?assert(Done > 60),
    ?assert(maps:get(leaf(1), PerHost) > maps:get(leaf(2), PerHost)),
    no_emulators(Config).

%% orbit_int with 2 nodes: the node under test here, the second in namespace d.
bench_nodes_on_a_host() ->
    [{doc, "run --nodes 2 with hosts: the second node in another namespace; rows, no failure."}].
bench_nodes_on_a_host(Config) ->
    Root = ?config(dir, Config),
    Conf = filename:join(Root, "hosts.config"),
    ok = file:write_file(Conf, io_lib:format(
        "{benchmarks, [orbit_int]}.\n{schedulers, [1]}.\n{nodes, [2]}.\n{iterations, 1}.\n"
        "{warmups, 0}.\n{launches, 1}.\n{sample, false}.\n"
        "{hosts, [{\"~s\", #{args => ~0p}}]}.\n", [leaf(3), ?config(ssh_args, Config)])),
    {Status, Out} = beamscale(Config, ["run", "--config", Conf, "--dist-address", ?HUB,
                                       "--quiet", "--out", Root, "--name", "bench"]),
    ct:pal("~ts", [Out]),
    ?assertEqual(0, Status),
    Run = filename:join(Root, "bench"),
    {ok, Rows} = file:read_file(filename:join(Run, "measurements.csv")),
    ?assert(length(string:split(string:trim(Rows), "\n", all)) > 1),
    ?assertNot(filelib:is_regular(filename:join(Run, "failures.csv"))
               andalso length(string:split(string:trim(element(2, file:read_file(
                   filename:join(Run, "failures.csv")))), "\n", all)) > 1),
    no_emulators(Config).

%%% The command, in the hub namespace

%% `beamscale ARGS' run in the hub, with TLS distribution (ERL_FLAGS, as a user gives it).
beamscale(Config, Args) ->
    [Erl | Rest] = beamscale_test_cli:command(Args),
    Hub = maps:get(h, ?config(ns, Config)),
    Port = open_port({spawn_executable, os:find_executable("ip")},
                     [{args, ["netns", "exec", Hub, Erl | Rest]}, exit_status, binary,
                      stderr_to_stdout, {env, [{"ERL_FLAGS", tls_flags(?config(tls, Config))}]}]),
    beamscale_test_cli:wait(Port, ?RUN_TIMEOUT_MS).

tls_flags(Optfile) -> "-proto_dist inet_tls -ssl_dist_optfile " ++ Optfile.

%% No emulator is left in the leaf namespaces once the command has ended.
no_emulators(Config) ->
    Leaves = [maps:get(L, ?config(ns, Config)) || {L, _} <- ?LEAVES],
    Beams = fun() -> [P || N <- Leaves, P <- pids(N), comm(P) =:= "beam.smp"] end,
    _ = wait_until(fun() -> Beams() =:= [] end, ?GONE_TIMEOUT_MS),
    ?assertEqual([], Beams()).

comm(Pid) ->
    case file:read_file("/proc/" ++ Pid ++ "/comm") of
        {ok, C} -> string:trim(binary_to_list(C));
        {error, _} -> ""
    end.

%%% The network: a hub and leaves joined by veth pairs

leaf(N) -> "10.213." ++ integer_to_list(N) ++ ".2".
hub_side(N) -> "10.213." ++ integer_to_list(N) ++ ".1".

make_network(#{h := Hub} = Names) ->
    [beamscale_load_test_netns:add(N) || N <- [Hub | [maps:get(L, Names) || {L, _} <- ?LEAVES]]],
    ip(["-n", Hub, "addr", "add", ?HUB ++ "/32", "dev", "lo"]),
    [begin
         Leaf = maps:get(L, Names),
         {H, V} = {Leaf ++ "h", Leaf ++ "v"},
         ip(["link", "add", H, "type", "veth", "peer", "name", V]),
         ip(["link", "set", H, "netns", Hub]),
         ip(["link", "set", V, "netns", Leaf]),
         ip(["-n", Hub, "addr", "add", hub_side(N) ++ "/30", "dev", H]),
         ip(["-n", Leaf, "addr", "add", leaf(N) ++ "/30", "dev", V]),
         [ip(["-n", Ns, "link", "set", D, "up"]) || {Ns, D} <- [{Hub, H}, {Leaf, V}]],
         %% The hub's own address is reached through its side of the pair (no forwarding).
         ip(["-n", Leaf, "route", "add", ?HUB ++ "/32", "via", hub_side(N)])
     end || {L, N} <- ?LEAVES],
    ok.

%%% Servers

nginx(Dir, Ns) ->
    Conf = filename:join(Dir, "nginx.conf"),
    ok = file:write_file(Conf, io_lib:format(
        "error_log ~ts/error.log;\npid ~ts/nginx.pid;\nevents { worker_connections 256; }\n"
        "http {\n  access_log off;\n"
        "  client_body_temp_path ~ts; proxy_temp_path ~ts; fastcgi_temp_path ~ts;\n"
        "  uwsgi_temp_path ~ts; scgi_temp_path ~ts;\n"
        "  server { listen ~s:~b; location / { return 200 'hello'; } }\n}\n",
        [Dir, Dir, Dir, Dir, Dir, Dir, Dir, ?HUB, ?HTTP_PORT])),
    beamscale_load_test_netns:start(Ns, "/usr/sbin/nginx",
                                    ["-p", Dir, "-c", Conf, "-g", "daemon off;"], ?HTTP_PORT).

%%% TLS distribution: a CA and one node certificate naming every address (as IP and as DNS
%%% names: the distribution checks the peer's name as given, an address string)

tls_files(Dir) ->
    Addrs = [?HUB, "127.0.0.1" | [leaf(N) || {_, N} <- ?LEAVES]],
    San = "subjectAltName=" ++ lists:join(",", [[T, ":", A] || A <- Addrs, T <- ["IP", "DNS"]]),
    ok = file:write_file(filename:join(Dir, "san.ext"), San),
    F = fun(N) -> filename:join(Dir, N) end,
    openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-keyout", F("ca.key"), "-out", F("ca.pem"), "-days", "2",
             "-subj", "/CN=beamscale-test-ca"]),
    openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", F("node.key"), "-out", F("node.csr"), "-subj", "/CN=beamscale-node"]),
    openssl(["x509", "-req", "-in", F("node.csr"), "-CA", F("ca.pem"), "-CAkey", F("ca.key"),
             "-CAcreateserial", "-out", F("node.pem"), "-days", "2", "-extfile", F("san.ext")]),
    Side = [{certfile, F("node.pem")}, {keyfile, F("node.key")}, {cacertfile, F("ca.pem")},
            {verify, verify_peer}, {secure_renegotiate, true}],
    Optfile = F("dist.conf"),
    ok = file:write_file(Optfile, io_lib:format("~p.~n", [[{server, [{fail_if_no_peer_cert, true}
                                                                     | Side]},
                                                           {client, Side}]])),
    Optfile.

openssl(Args) ->
    case beamscale_os:cmd(os:find_executable("openssl"), Args, ?UP_TIMEOUT_MS) of
        {0, _} -> ok;
        {S, Out} -> ct:fail("openssl ~ts: ~p ~ts", [hd(Args), S, Out])
    end.
