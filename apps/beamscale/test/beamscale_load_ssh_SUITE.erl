%% Load nodes reached by ssh: a real sshd on 127.0.0.1 (its own port, throwaway host and user
%% keys), a load run whose users run on a node started through it, and the node and sshd gone
%% after. Also the scenario's errors for a wrong host list.
-module(beamscale_load_ssh_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([load_node_over_ssh/1, ssh_node_killed_on_its_host/1, wrong_hosts/1]).
-export([load_node_over_ssh/0, ssh_node_killed_on_its_host/0, wrong_hosts/0]).

suite() -> [{timetrap, {minutes, 3}}].

all() -> [load_node_over_ssh, ssh_node_killed_on_its_host, wrong_hosts].

init_per_suite(Config) ->
    {ok, _} = beamscale_node:distribute(),
    {Sshd, Args} = beamscale_test_sshd:start(?config(priv_dir, Config)),
    [{sshd, Sshd}, {ssh_args, Args} | Config].

end_per_suite(Config) ->
    beamscale_test_sshd:stop(?config(sshd, Config)).

%% 50 users/s for 2 s run on a load node started through ssh: every session is done there, the
%% run names the node, and the node is gone after.
load_node_over_ssh() -> [{doc, "A load node started over ssh runs all sessions; gone after."}].
load_node_over_ssh(Config) ->
    Dir = filename:join(?config(priv_dir, Config), "ssh"),
    Text = io_lib:format("{targets, [{sut, #{start => #{}}}]}.\n"
                         "{phases, [{p, #{duration_s => 2, rate => 50}}]}.\n"
                         "{sessions, [{s, #{steps => [{loop, 3, [{rpc, #{call => "
                         "{beamscale_target_echo, echo, [x]}}}]}]}}]}.\n"
                         "{load_nodes, [{\"127.0.0.1\", #{args => ~0tp}}]}.\n"
                         "{sample, []}.\n{drain_s, 3}.\n", [?config(ssh_args, Config)]),
    S = beamscale_test_load:scenario(Config, "ssh.scenario", Text),
    {ok, Dir, _} = beamscale_loadtest:run(S, #{dir => Dir, quiet => true, seed => 5}),
    Sum = beamscale_test_load:json(Dir, "summary.json"),
    #{<<"sessions_started">> := Started, <<"sessions_done">> := Done, <<"errors">> := 0,
      <<"load_nodes">> := [#{<<"node">> := Node, <<"sessions_done">> := Done}]} = Sum,
    ct:pal("~b sessions (offered 100) on ~ts", [Done, Node]),
    ?assert(Started > 60 andalso Started < 140),
    ?assertEqual(Started, Done),
    ?assertMatch({match, _}, re:run(Node, "^bs_load1_.*@127\\.0\\.0\\.1$")),
    Run = beamscale_test_load:json(Dir, "run.json"),
    ?assertEqual([Node], maps:get(<<"load_nodes">>, Run)),
    ?assertNot(lists:member(binary_to_atom(Node), nodes())),
    %% Its name is gone from epmd (other runs on the host, such as CT's other stream, have
    %% bs_load nodes of their own).
    [Name, _] = binary:split(Node, <<"@">>),
    ?assertNot(lists:member(binary_to_list(Name), beamscale_test_load:epmd_names())).

%% A node started through ssh that does not halt (its OS process stopped with SIGSTOP) is killed
%% by its host through ssh: the remote twin of the local kill by OS pid.
ssh_node_killed_on_its_host() -> [{doc, "A SIGSTOPped ssh node is killed on its host."}].
ssh_node_killed_on_its_host(Config) ->
    Spec = #{erl => "erl", flags => "",
             ssh => #{host => "127.0.0.1", args => ?config(ssh_args, Config)}},
    {ok, #{node := Node, os_pid := OsPid} = H} = beamscale_node:start("stuck", Spec),
    ?assert(beamscale_node:alive(OsPid)),
    "" = os:cmd("kill -STOP " ++ OsPid),
    ok = beamscale_node:stop(H),
    %% The host's kill has returned; the process may still be ending (a few polls).
    ?assertEqual(ok, beamscale_os:wait_gone(OsPid, 5000)),
    ?assertNot(lists:member(Node, nodes())).

%% A wrong host list names what is wrong, with the file and line.
wrong_hosts() -> [{doc, "Each wrong load_nodes list: error naming file, line and fault."}].
wrong_hosts(Config) ->
    Cases = [{"{load_nodes, [\"127.0.0.1\", {\"127.0.0.1\", #{port => 22}}]}.",
              "127.0.0.1: unknown key port (known: args, user, erl, nodes, weight, "
              "source_ips)"},
             {"{load_nodes, [{\"127.0.0.1\", #{args => \"-p 22\"}}]}.",
              "127.0.0.1: args: expected a list of strings (ssh options)"},
             {"{load_nodes, [{\"127.0.0.1\", #{user => 7}}]}.",
              "127.0.0.1: user: expected a string not starting with -"},
             {"{load_nodes, [{\"127.0.0.1\", #{user => \"-oProxyCommand=x\"}}]}.",
              "127.0.0.1: user: expected a string not starting with -"},
             {"{load_nodes, [{\"h\", #{nodes => 0}}]}.", "h: nodes: expected 1 to 256 load nodes"},
             {"{load_nodes, [{\"h\", #{weight => -1}}]}.", "h: weight: expected a positive number"},
             {"{load_nodes, [{\"h\", #{source_ips => [\"x\"]}}]}.",
              "h: source_ips: \"x\" is not an IP address"},
             {"{load_nodes, [host]}.", "expected a host name, not host"},
             {"{load_nodes, -1}.", "expected a number of load nodes"}],
    [begin
         File = filename:join(?config(priv_dir, Config), "wrong.scenario"),
         ok = file:write_file(File, ["{targets, [{sut, #{start => #{}}}]}.\n"
                                     "{phases, [{p, #{duration_s => 1, rate => 1}}]}.\n"
                                     "{sessions, [{s, #{steps => [{think, 1}]}}]}.\n", Text, "\n"]),
         {error, Reason} = beamscale_load_scenario:load(File),
         Msg = lists:flatten(beamscale_load_scenario:format_error(Reason)),
         ct:pal("~ts", [Msg]),
         ?assertMatch({match, _}, re:run(Msg, "wrong\\.scenario:4: key load_nodes: ")),
         ?assertNotEqual(nomatch, string:find(Msg, Want))
     end || {Text, Want} <- Cases].
