%% Tsung's `<client type="batch">' run as inside a batch job (issue #48): the job's node list,
%% made by the test as each batch system hands it out (torque's and pbs's `$PBS_NODEFILE', oar's
%% `$OAR_NODEFILE', a host a line per core; lsf's `$LSB_HOSTS', words; slurm's
%% `$SLURM_NODELIST', `c[1-2]'), names hosts of a network namespace of this suite's own: `c1'
%% and `c2', each an sshd's address there, resolved by the namespace's /etc/hosts. `beamscale
%% load' runs in the namespace with the variable set; its load nodes are started over ssh on the
%% hosts the list names, as many on a host as the list names it, this machine left out (Tsung
%% keeps its controller's host free), and every node sends requests to nginx there. Outside a
%% job, the command names the variable it lacks. The namespace goes, with every process left in
%% it, in end_per_suite (beamscale_load_test_netns).
-module(beamscale_load_batch_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-import(beamscale_load_test_netns, [ip/1, etc/1, exec_ok/2]).

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([torque/1, pbs/1, oar/1, lsf/1, slurm/1, outside_a_job/1]).
-export([torque/0, pbs/0, oar/0, lsf/0, slurm/0, outside_a_job/0]).

%% The server's (and the command's node's) address; the batch hosts'.
-define(SERVER, "10.202.1.1").
-define(C1, "10.202.1.2").
-define(C2, "10.202.1.3").
-define(UP_MS, 15000).
%% A 6 s phase plus three node starts through ssh (each a login and an emulator boot).
-define(RUN_MS, 180000).
-define(PROBE, "/probe").

suite() -> [{timetrap, {minutes, 5}}].

all() -> [outside_a_job, torque, pbs, oar, lsf, slurm].

init_per_suite(Config) ->
    Ns = "bsbatch" ++ os:getpid(),
    Dir = filename:join(?config(priv_dir, Config), "batch"),
    ok = filelib:ensure_path(Dir),
    Config1 = [{ns, Ns}, {dir, Dir} | Config],
    try
        network(Ns),
        Procs = [sshd(Ns, Dir), nginx(Ns, Dir)],
        %% One epmd for the namespace's three "hosts", on all their addresses.
        ip(["netns", "exec", Ns, "epmd", "-daemon", "-address",
            string:join(["127.0.0.1", ?SERVER, ?C1, ?C2], ",")]),
        [{procs, Procs} | Config1]
    catch C:R:St ->
        end_per_suite(Config1),
        erlang:raise(C, R, St)
    end.

end_per_suite(Config) ->
    [beamscale_load_test_netns:stop(P) || P <- proplists:get_value(procs, Config, [])],
    Ns = ?config(ns, Config),
    beamscale_load_test_netns:remove(Ns),
    ?assertNot(lists:member(Ns, beamscale_load_test_netns:list())),
    ok.

%% ---- the cases ----

torque() -> [{doc, "torque: $PBS_NODEFILE's hosts, a line a core, get that many load nodes."}].
torque(Config) -> node_file(Config, "torque", "PBS_NODEFILE").

pbs() -> [{doc, "pbs: read as torque, from $PBS_NODEFILE."}].
pbs(Config) -> node_file(Config, "pbs", "PBS_NODEFILE").

oar() -> [{doc, "oar: $OAR_NODEFILE's hosts, a line a core."}].
oar(Config) -> node_file(Config, "oar", "OAR_NODEFILE").

lsf() -> [{doc, "lsf: $LSB_HOSTS, a word a core, this machine left out."}].
lsf(Config) ->
    {ok, Here} = inet:gethostname(),
    batch_run(Config, "lsf", "LSB_HOSTS", string:join([Here, "c1", "c1.cluster", "c2"], " ")).

slurm() -> [{doc, "slurm: $SLURM_NODELIST's range c[1-2], a load node on each."}].
slurm(Config) ->
    batch_run(Config, "slurm", "SLURM_NODELIST", "c[1-2]", [<<"c1">>, <<"c2">>]).

outside_a_job() ->
    [{doc, "Each batch system outside its job: exit 2, the file's line and the variable named."}].
outside_a_job(Config) ->
    Dir = ?config(dir, Config),
    [begin
         File = file(Dir, Batch),
         ?assertEqual(false, os:getenv(Var)),
         {Status, Out} = beamscale_test_cli:run(["load", File, "--out", Dir]),
         ct:pal("~ts: ~b ~ts", [Batch, Status, Out]),
         ?assertEqual(2, Status),
         Want = lists:flatten(io_lib:format(
                  "~ts:3: <client type=\"batch\" batch=\"~ts\"> reads $~ts, which is not set "
                  "(run it inside a ~ts job)", [File, Batch, Var, Batch])),
         ?assertNotEqual(nomatch, string:find(Out, Want), Out)
     end || {Batch, Var} <- [{"torque", "PBS_NODEFILE"}, {"pbs", "PBS_NODEFILE"},
                             {"oar", "OAR_NODEFILE"}, {"lsf", "LSB_HOSTS"},
                             {"slurm", "SLURM_NODELIST"}]],
    ok.

%% A node file as torque, pbs and oar write it: a host a line for each core, full names, this
%% machine among them (the controller's host, left out).
node_file(Config, Batch, Var) ->
    {ok, Here} = inet:gethostname(),
    Nodes = filename:join(?config(dir, Config), Batch ++ ".nodes"),
    ok = file:write_file(Nodes, [[H, "\n"] || H <- [Here, "c1.cluster", "c1.cluster",
                                                    "c2.cluster"]]),
    batch_run(Config, Batch, Var, Nodes).

batch_run(Config, Batch, Var, Value) ->
    batch_run(Config, Batch, Var, Value, [<<"c1">>, <<"c1">>, <<"c2">>]).

%% `beamscale load' of the batch file in the namespace with `Var' set to `Value': done with no
%% error, its load nodes on `Hosts' (each node's host, sorted), each node's requests seen by
%% nginx.
batch_run(Config, Batch, Var, Value, Hosts) ->
    Dir = ?config(dir, Config),
    Log = filename:join(Dir, "access.log"),
    Before = length(lines(Log)),
    Out = filename:join(Dir, Batch),
    [Erl | Args] = beamscale_test_cli:command(
                     ["load", file(Dir, Batch), "--name", "run", "--out", Out, "--seed", "5",
                      "--dist-address", ?SERVER]),
    Port = open_port({spawn_executable, os:find_executable("ip")},
                     [{args, ["netns", "exec", ?config(ns, Config), Erl | Args]}, {cd, Dir},
                      {env, [{Var, Value}]}, exit_status, binary, stderr_to_stdout]),
    {Status, Text} = beamscale_test_cli:wait(Port, ?RUN_MS),
    ct:pal("~ts=~ts: exit ~b~n~ts", [Var, Value, Status, Text]),
    ?assertEqual(0, Status),
    Sum = beamscale_test_load:json(filename:join(Out, "run"), "summary.json"),
    #{<<"errors">> := Errors, <<"requests">> := Requests, <<"load_nodes">> := Nodes} = Sum,
    ?assertEqual(0, Errors),
    ?assertEqual(Hosts, lists:sort([lists:last(binary:split(N, <<"@">>))
                                    || #{<<"node">> := N} <- Nodes])),
    %% Every node had users and sent their requests, as nginx saw them.
    PerNode = [maps:get(<<"requests">>, N, 0) || N <- Nodes],
    ct:pal("requests ~b, per node ~p", [Requests, PerNode]),
    [?assert(R > 0) || R <- PerNode],
    ?assertEqual(Requests, lists:sum(PerNode)),
    ?assertEqual(Requests, length(lines(Log)) - Before),
    shares(Hosts, Nodes).

%% Tsung makes a client of each line of the list, each of the client's weight: a host named
%% twice gets two shares of the users, not one split over two nodes. c1 named twice, c2 once:
%% c2's users about half of c1's (0.5, 0.09 by the users' count; one share each would be 1.0).
shares([<<"c1">>, <<"c1">>, <<"c2">>], Nodes) ->
    Users = fun(H) -> lists:sum([S || #{<<"node">> := N, <<"sessions_started">> := S} <- Nodes,
                                      lists:last(binary:split(N, <<"@">>)) =:= H])
            end,
    {C1, C2} = {Users(<<"c1">>), Users(<<"c2">>)},
    ct:pal("users on c1 ~b, on c2 ~b", [C1, C2]),
    ?assert(C2 < 0.75 * C1);
shares(_, _) -> ok.

%% The batch file: a 6 s phase of 30 users a second, two requests each, to nginx by name.
file(Dir, Batch) ->
    File = filename:join(Dir, Batch ++ ".xml"),
    ok = file:write_file(File, io_lib:format(
      "<?xml version=\"1.0\"?>\n<tsung loglevel=\"notice\">\n"
      "<clients><client type=\"batch\" batch=\"~ts\" maxusers=\"1000\"/></clients>\n"
      "<servers><server host=\"server\" port=\"80\" type=\"tcp\"/></servers>\n"
      "<load><arrivalphase phase=\"1\" duration=\"6\" unit=\"second\">"
      "<users arrivalrate=\"30\" unit=\"second\"/></arrivalphase></load>\n"
      "<sessions><session name=\"s\" probability=\"100\" type=\"ts_http\">"
      "<request><http url=\"/batch\" method=\"GET\"/></request>"
      "<thinktime value=\"0.2\"/>"
      "<request><http url=\"/batch\" method=\"GET\"/></request>"
      "</session></sessions>\n</tsung>\n", [Batch])),
    File.

lines(Log) ->
    case file:read_file(Log) of
        {ok, B} -> [L || L <- binary:split(B, <<"\n">>, [global]), L =/= <<>>,
                         binary:match(L, <<"GET " ?PROBE " ">>) =:= nomatch];
        {error, enoent} -> []
    end.

%% ---- the namespace and its servers ----

%% lo, and a veth pair: bsb0 with the server's address, bsb1 with the batch hosts'.
network(Ns) ->
    beamscale_load_test_netns:add(Ns),
    [ip(["-n", Ns | C])
     || C <- [["link", "add", "bsb0", "type", "veth", "peer", "name", "bsb1"],
              ["addr", "add", ?SERVER ++ "/24", "dev", "bsb0"],
              ["addr", "add", ?C1 ++ "/24", "dev", "bsb1"],
              ["addr", "add", ?C2 ++ "/24", "dev", "bsb1"],
              ["link", "set", "bsb0", "up"], ["link", "set", "bsb1", "up"]]],
    ok = filelib:ensure_path(etc(Ns)),
    ok = file:write_file(filename:join(etc(Ns), "hosts"),
                         ["127.0.0.1 localhost\n", ?SERVER, " server\n",
                          ?C1, " c1.cluster c1\n", ?C2, " c2.cluster c2\n"]).

%% sshd on the batch hosts' addresses, port 22 of the namespace.
sshd(Ns, Dir) -> beamscale_load_test_netns:ssh_as(Ns, Dir, [?C1, ?C2], "c2").

%% nginx as `server', logging each request.
nginx(Ns, Dir) ->
    P = beamscale_load_test_netns:nginx(Ns, Dir, io_lib:format(
          " log_format who '$remote_addr|$host|$request';\n"
          " server {\n  listen ~s:80;\n  access_log ~ts/access.log who;\n"
          "  location / { return 200 \"ok\"; }\n }\n", [?SERVER, Dir]), 80),
    up(fun() -> exec_ok(Ns, "curl -sf -o /dev/null http://server" ?PROBE) end, "nginx"),
    P.

up(Fun, What) ->
    case beamscale_load_test_netns:wait_until(Fun, ?UP_MS) of
        ok -> ok;
        timeout -> ct:fail("~ts did not answer in the namespace", [What])
    end.
