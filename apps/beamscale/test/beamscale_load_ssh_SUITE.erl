%% Load nodes reached by ssh: a real sshd on 127.0.0.1 (its own port, throwaway host and user
%% keys), a load run whose users run on a node started through it, and the node and sshd gone
%% after. Also the scenario's errors for a wrong host list.
-module(beamscale_load_ssh_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([load_node_over_ssh/1, ssh_node_killed_on_its_host/1, wrong_hosts/1]).
-export([load_node_over_ssh/0, ssh_node_killed_on_its_host/0, wrong_hosts/0]).

-define(SSHD, "/usr/sbin/sshd").
-define(UP_TIMEOUT_MS, 10000).

suite() -> [{timetrap, {minutes, 3}}].

all() -> [load_node_over_ssh, ssh_node_killed_on_its_host, wrong_hosts].

init_per_suite(Config) ->
    {ok, _} = beamscale_node:distribute(),
    Dir = ?config(priv_dir, Config),
    filelib:is_regular(?SSHD) orelse ct:fail("no sshd (scripts/install-deps.sh installs it)"),
    [keygen(filename:join(Dir, K)) || K <- ["host_key", "id"]],
    {ok, Pub} = file:read_file(filename:join(Dir, "id.pub")),
    ok = file:write_file(filename:join(Dir, "authorized_keys"), Pub),
    %% sshd started as root wants its privilege separation directory.
    _ = file:make_dir("/run/sshd"),
    Port = free_port(),
    Conf = filename:join(Dir, "sshd_config"),
    ok = file:write_file(Conf, sshd_config(Dir, Port)),
    Sshd = open_port({spawn_executable, ?SSHD}, [{args, ["-D", "-e", "-f", Conf]},
                                                 stderr_to_stdout, exit_status, hide]),
    {os_pid, OsPid} = erlang:port_info(Sshd, os_pid),
    ok = wait_listening(Port, ?UP_TIMEOUT_MS),
    Args = ["-p", integer_to_list(Port), "-i", filename:join(Dir, "id"),
            "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
            "-o", "LogLevel=ERROR"],
    [{sshd, {Sshd, OsPid}}, {ssh_args, Args} | Config].

end_per_suite(Config) ->
    {Sshd, OsPid} = ?config(sshd, Config),
    _ = os:cmd("kill " ++ integer_to_list(OsPid)),
    catch port_close(Sshd),
    ok.

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
    ?assertEqual([], [N || N <- beamscale_test_load:epmd_names(), lists:prefix("bs_load", N)]).

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
    ?assertNot(beamscale_node:alive(OsPid)),
    ?assertNot(lists:member(Node, nodes())).

%% A wrong host list names what is wrong, with the file and line.
wrong_hosts() -> [{doc, "Each wrong load_nodes list: error naming file, line and fault."}].
wrong_hosts(Config) ->
    Cases = [{"{load_nodes, [\"127.0.0.1\", {\"127.0.0.1\", #{port => 22}}]}.",
              "127.0.0.1: unknown key port (known: args, user, erl, nodes, weight)"},
             {"{load_nodes, [{\"127.0.0.1\", #{args => \"-p 22\"}}]}.",
              "127.0.0.1: args: expected a list of strings (ssh options)"},
             {"{load_nodes, [{\"127.0.0.1\", #{user => 7}}]}.",
              "127.0.0.1: user: expected a string not starting with -"},
             {"{load_nodes, [{\"127.0.0.1\", #{user => \"-oProxyCommand=x\"}}]}.",
              "127.0.0.1: user: expected a string not starting with -"},
             {"{load_nodes, [{\"h\", #{nodes => 0}}]}.", "h: nodes: expected 1 to 256 load nodes"},
             {"{load_nodes, [{\"h\", #{weight => -1}}]}.", "h: weight: expected a positive number"},
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

%%% Helpers

keygen(File) ->
    "" = os:cmd("ssh-keygen -q -t ed25519 -N '' -f " ++ File ++ " </dev/null").

sshd_config(Dir, Port) ->
    io_lib:format("Port ~b\nListenAddress 127.0.0.1\nHostKey ~ts/host_key\n"
                  "AuthorizedKeysFile ~ts/authorized_keys\nPidFile ~ts/sshd.pid\n"
                  "StrictModes no\nUsePAM no\nPasswordAuthentication no\n"
                  "KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n"
                  "LogLevel ERROR\n", [Port, Dir, Dir, Dir]).

free_port() ->
    {ok, L} = gen_tcp:listen(0, [{ip, {127, 0, 0, 1}}]),
    {ok, Port} = inet:port(L),
    ok = gen_tcp:close(L),
    Port.

wait_listening(_Port, Left) when Left =< 0 -> {error, sshd_not_listening};
wait_listening(Port, Left) ->
    case gen_tcp:connect({127, 0, 0, 1}, Port, [], 500) of
        {ok, S} -> gen_tcp:close(S);
        {error, _} -> timer:sleep(100), wait_listening(Port, Left - 100)
    end.
