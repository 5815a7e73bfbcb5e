%% Test helper: the command line in a fresh emulator with this build's code, as a user runs it.
-module(beamscale_test_cli).
-export([open/1, command/1, run/1, wait/2, no_strays/0]).

-define(EXIT_TIMEOUT, 60000).
%% How long a stopped node may take to leave /proc before it counts as a stray.
-define(STRAY_WAIT_MS, 5000).

%% Start `beamscale ARGS' as a port (its output and exit status come as port messages).
open(Args) ->
    [Erl | Rest] = command(Args),
    open_port({spawn_executable, Erl}, [{args, Rest}, exit_status, binary, stderr_to_stdout]).

%% The command line of `beamscale ARGS' with this build's code: the executable, then arguments.
command(Args) ->
    Paths = lists:append([["-pa", code:lib_dir(A, ebin)]
                          || A <- [beamscale, beamscale_format, beamscale_stats, beamscale_report,
                                   beamscale_bench, beamscale_targets, beamscale_load,
                                   beamscale_amoc]]),
    [os:find_executable("erl"), "-noshell"] ++ Paths
        ++ ["-eval", "beamscale_cli:main(init:get_plain_arguments())", "-extra" | Args].

%% Run `beamscale ARGS' to its end: {ExitCode, Output}.
run(Args) -> wait(open(Args), ?EXIT_TIMEOUT).

wait(Port, Timeout) -> wait(Port, Timeout, <<>>).

wait(Port, Timeout, Acc) ->
    receive
        {Port, {data, D}} -> wait(Port, Timeout, <<Acc/binary, D/binary>>);
        {Port, {exit_status, S}} -> {S, binary_to_list(Acc)}
    after Timeout -> error({no_exit, Acc})
    end.

%% No emulator this node started is left (nodes a run started are stopped): they carry
%% BEAMSCALE_RUN=<this node> in their environment (beamscale_node), and their command line is an
%% emulator's (erlexec's -root; argv[0] is not always beam.smp: under rebar3 it is rebar3).
no_strays() -> no_strays(?STRAY_WAIT_MS).

%% A node stopped (or killed) a moment ago may still be on its way out, and its helper processes
%% (erl_child_setup) carry its environment too: only an emulator still there after a few seconds
%% is a stray.
no_strays(Ms) ->
    Mark = <<"BEAMSCALE_RUN=", (atom_to_binary(node()))/binary, 0>>,
    Strays = [P || P <- filelib:wildcard("[0-9]*", "/proc"),
                   {ok, Env} <- [file:read_file("/proc/" ++ P ++ "/environ")],
                   binary:match(<<Env/binary, 0>>, Mark) =/= nomatch,
                   {ok, Cmd} <- [file:read_file("/proc/" ++ P ++ "/cmdline")],
                   binary:match(Cmd, <<"-root", 0>>) =/= nomatch],
    case Strays of
        [] -> ok;
        _ when Ms > 0 -> timer:sleep(200), no_strays(Ms - 200);
        _ -> error({strays, Strays})
    end.
