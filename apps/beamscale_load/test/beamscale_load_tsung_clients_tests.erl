%% Tsung's `<clients>' (beamscale_load_tsung_clients): load nodes on other hosts, their
%% weights and `cpu', their own source addresses; a client here and one elsewhere refused.
-module(beamscale_load_tsung_clients_tests).

-include_lib("eunit/include/eunit.hrl").

-import(beamscale_load_tsung_tests, [xml/1, load/1, err/1]).

-include("beamscale_load_code_first.hrl").

%% Tsung's clients on other hosts: `cpu' load nodes there, `weight' their share of arrivals.
remote_clients_test() ->
    Top = "<clients><client host=\"10.0.0.2\" weight=\"3\" cpu=\"2\"/>"
          "<client host=\"hostb\"/></clients>",
    {S, _} = load(xml(#{top => Top})),
    ?assertEqual([#{host => "10.0.0.2", args => [], nodes => 2, weight => 3},
                  #{host => "hostb", args => [], nodes => 1, weight => 1}],
                 maps:get(load_nodes, S)).

%% A client on another host with `<ip>'s: its own source addresses (http_distributed.xml).
remote_client_ips_test() ->
    Top = "<clients><client host=\"hosta\"><ip value=\"10.0.0.2\"/><ip value=\"10.0.0.3\"/>"
          "</client><client host=\"hostb\" cpu=\"2\"><iprange value=\"10.0.1.1-2\"/>"
          "<ip scan=\"true\" value=\"eth1\"/></client><client host=\"hostc\"/></clients>",
    {S, _} = load(xml(#{top => Top})),
    ?assertEqual([#{host => "hosta", args => [], nodes => 1, weight => 1,
                    source_ips => [{10, 0, 0, 2}, {10, 0, 0, 3}]},
                  #{host => "hostb", args => [], nodes => 2, weight => 1,
                    source_ips => [{10, 0, 1, 1}, {10, 0, 1, 2}, {interface, "eth1"}]},
                  #{host => "hostc", args => [], nodes => 1, weight => 1}],
                 maps:get(load_nodes, S)),
    ?assertEqual([], maps:get(source_ips, S)),
    Bad = "<clients><client host=\"hostb\"><ip value=\"10.0.0.300\"/></client></clients>",
    ?assertNotEqual(nomatch, string:find(err(#{top => Bad}), "<ip value>: ")).

%% A client here and one elsewhere at once: refused.
remote_clients_refused_test_() ->
    Mixed = "<clients><client host=\"localhost\"/><client host=\"hostb\"/></clients>",
    [?_assertNotEqual(nomatch, string:find(err(#{top => Mixed}), "at once"))].

%% Batch clients: the job's hosts from the batch system's variable, as Tsung reads them (short
%% names; a host named N times, N load nodes there); outside a job the variable is named.
batch_clients_test() ->
    Dir = string:trim(os:cmd("mktemp -d")),
    NodeFile = filename:join(Dir, "nodes"),
    ok = file:write_file(NodeFile, "n1.cluster.org\nn1.cluster.org\nn2.cluster.org\n"),
    Client = fun(Batch) -> "<clients><client type=\"batch\" batch=\"" ++ Batch
                               ++ "\" maxusers=\"30\"/></clients>"
             end,
    Hosts = fun(Var, Value, Batch) ->
                    os:putenv(Var, Value),
                    try maps:get(load_nodes, element(1, load(xml(#{top => Client(Batch)}))))
                    after os:unsetenv(Var)
                    end
            end,
    %% n1 named twice: two load nodes and two shares of the users (Tsung: a client a name).
    Want = [#{host => "n1", args => [], nodes => 2, weight => 2},
            #{host => "n2", args => [], nodes => 1, weight => 1}],
    ?assertEqual(Want, Hosts("PBS_NODEFILE", NodeFile, "torque")),
    ?assertEqual(Want, Hosts("PBS_NODEFILE", NodeFile, "pbs")),
    ?assertEqual(Want, Hosts("OAR_NODEFILE", NodeFile, "oar")),
    ?assertEqual(Want, Hosts("LSB_HOSTS", "n1.x n1.x n2", "lsf")),
    ?assertEqual([#{host => H, args => [], nodes => 1, weight => 1}
                  || H <- ["node01", "node02", "node03", "node7", "gpu5"]],
                 Hosts("SLURM_NODELIST", "node[01-03,7],gpu5", "slurm")),
    os:unsetenv("PBS_NODEFILE"),
    ?assertMatch("t.xml:4: <client type=\"batch\" batch=\"torque\"> reads $PBS_NODEFILE, which "
                 "is not set" ++ _, err(#{top => Client("torque")})),
    ?assertMatch("t.xml:4: <client batch=\"sge\">" ++ _, err(#{top => Client("sge")})),
    os:putenv("SLURM_NODELIST", "node[3-1]"),
    ?assertMatch("t.xml:4: $SLURM_NODELIST: range 3-1" ++ _, err(#{top => Client("slurm")})),
    os:unsetenv("SLURM_NODELIST"),
    os:putenv("PBS_NODEFILE", filename:join(Dir, "absent")),
    ?assertMatch("t.xml:4: $PBS_NODEFILE: " ++ _, err(#{top => Client("torque")})),
    os:unsetenv("PBS_NODEFILE"),
    ?assertMatch("t.xml:4: <client scan_intf> is read on batch clients only" ++ _,
                 err(#{top => "<clients><client host=\"h\" scan_intf=\"eth0\"/></clients>"})).

%% The shipped fs-nfs.xml's batch client reads inside a torque job.
fs_nfs_batch_test() ->
    Dir = string:trim(os:cmd("mktemp -d")),
    NodeFile = filename:join(Dir, "nodes"),
    ok = file:write_file(NodeFile, "c1\nc2\n"),
    os:putenv("PBS_NODEFILE", NodeFile),
    try
        {ok, S, _} = beamscale_load_tsung:load("/usr/share/doc/tsung/examples/fs-nfs.xml"),
        ?assertEqual(["c1", "c2"], [H || #{host := H} <- maps:get(load_nodes, S)])
    after os:unsetenv("PBS_NODEFILE")
    end.
