%% @doc The `beamscale' command line: dispatches to one module per command and turns outcomes
%% into exit codes: 0 ok, 1 a benchmark or check failed, 2 bad usage or bad input, 99 a load
%% aborted by a threshold.
-module(beamscale_cli).

-export([main/1, dispatch/1]).

%% @doc The escript entry point.
-spec main([string()]) -> no_return().
main(Argv) ->
    ok = beamscale_preload:escript(),
    Code = dispatch(Argv),
    %% Let the group leader flush what was printed before the emulator stops.
    _ = (catch io:put_chars("")),
    erlang:halt(Code, [{flush, true}]).

%% A reader that closed our standard output (`beamscale list | head -1') ends the command the
%% way it ends `ls' or `cat', which die of SIGPIPE: quietly, with 128 + 13. Exit 0 would claim a
%% cut-short `run' or `compare' had printed everything; 141 is what `set -o pipefail' scripts
%% already expect of any tool whose reader leaves early.
-define(EXIT_CLOSED_OUTPUT, 141).

%% @doc Run a command line and return its exit code.
-spec dispatch([string()]) -> 0 | 1 | 2 | ?EXIT_CLOSED_OUTPUT.
dispatch([]) -> dispatch(["help"]);
dispatch([Flag | Rest]) when Flag =:= "--help"; Flag =:= "-h" -> dispatch(["help" | Rest]);
dispatch([Name | Argv]) ->
    case beamscale_cmd:find(Name) of
        {ok, Mod} -> command(Mod, [Name | Argv]);
        error ->
            io:format(standard_error, "beamscale: unknown command ~ts (try: beamscale help)~n",
                      [Name]),
            2
    end.

command(Mod, [_ | Argv] = Line) ->
    #{options := Spec} = Mod:info(),
    case lists:member("--help", Argv) orelse lists:member("-h", Argv) of
        true -> beamscale_cmd_help:show(Mod), 0;
        false ->
            case beamscale_args:parse(Spec, Argv) of
                {ok, Parsed} -> outcome(Mod, crash_file(Line, Parsed, run(Mod, Parsed)));
                {error, Reason} -> error_line(Mod, beamscale_error:format(Reason)), 2
            end
    end.

%% --dist-address (load, run, saturate): where this node's distribution listens, set before
%% the command makes it distributed.
run(Mod, #{opts := #{dist_address := Address} = Opts} = Parsed) ->
    case beamscale_node:listen(Address) of
        ok -> run(Mod, Parsed#{opts := maps:remove(dist_address, Opts)});
        {error, _} = Error -> Error
    end;
%% An unexpected crash is reported in one line with its reason; its stack goes to the crash
%% file that line names (beamscale_crash).
run(Mod, Parsed) ->
    try Mod:do(Parsed)
    catch
        error:terminated:Stack ->
            %% An io request answered `terminated': our output device is gone.
            case is_process_alive(group_leader()) of
                false -> closed_output;
                true -> crash(error, terminated, Stack)
            end;
        %% A file that could not be written (a full disk, a read-only directory): one line
        %% naming it, not an internal error.
        error:{beamscale_format_file, _} = Why -> {error, Why};
        %% A run directory's file that is not one of ours (compare, report).
        error:{beamscale_store, {header, _, _}} = Why -> {error, Why};
        Class:Reason:Stack -> crash(Class, Reason, Stack)
    end.

crash(Class, Reason, Stack) ->
    {crash, {Class, Reason, Stack}}.

%% The crash file written where the run's files are (or here), its name kept for the line.
crash_file(Line, #{opts := Opts}, {crash, Crash}) ->
    {crash, Crash, beamscale_crash:write(beamscale_crash:dir(Opts), Line, Crash)};
crash_file(_Line, _Parsed, Outcome) -> Outcome.

outcome(_Mod, ok) -> 0;
outcome(_Mod, closed_output) -> ?EXIT_CLOSED_OUTPUT;
%% Stopped by a signal, with its work written (`load'): said, with the signal's status.
outcome(Mod, {interrupted, Status}) -> error_line(Mod, "interrupted"), Status;
outcome(Mod, {failed, Text}) -> error_line(Mod, Text), 1;
%% A threshold's `:abort' stopped the load (k6's code, which CI scripts test for).
outcome(Mod, {aborted, Text}) -> error_line(Mod, Text), 99;
outcome(Mod, {crash, {Class, Reason, _}, Written}) ->
    Where = case Written of
                {ok, File} -> ["details in ", File];
                {error, Why} -> ["no ", beamscale_crash:file_name(), ": ", file:format_error(Why)]
            end,
    error_line(Mod, [io_lib:format("internal error: ~0tp", [{Class, Reason}],
                                   [{chars_limit, 500}]), " (", Where, ")"]),
    1;
outcome(Mod, {error, Reason}) -> error_line(Mod, beamscale_error:format(Mod, Reason)), 2.

error_line(Mod, Text) ->
    #{name := Name} = Mod:info(),
    io:format(standard_error, "beamscale ~s: ~ts~n", [Name, Text]).
