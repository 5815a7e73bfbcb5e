%% @doc The `beamscale' command line: dispatches to one module per command and turns outcomes
%% into exit codes: 0 ok, 1 a benchmark or check failed, 2 bad usage or bad input.
-module(beamscale_cli).

-export([main/1, dispatch/1]).

%% @doc The escript entry point.
-spec main([string()]) -> no_return().
main(Argv) ->
    Code = dispatch(Argv),
    %% Let the group leader flush what was printed before the emulator stops.
    _ = (catch io:put_chars("")),
    erlang:halt(Code, [{flush, true}]).

%% @doc Run a command line and return its exit code.
-spec dispatch([string()]) -> 0 | 1 | 2.
dispatch([]) -> dispatch(["help"]);
dispatch([Flag | Rest]) when Flag =:= "--help"; Flag =:= "-h" -> dispatch(["help" | Rest]);
dispatch([Name | Argv]) ->
    case beamscale_cmd:find(Name) of
        {ok, Mod} -> command(Mod, Argv);
        error ->
            io:format(standard_error, "beamscale: unknown command ~ts (try: beamscale help)~n",
                      [Name]),
            2
    end.

command(Mod, Argv) ->
    #{options := Spec} = Mod:info(),
    case lists:member("--help", Argv) orelse lists:member("-h", Argv) of
        true -> beamscale_cmd_help:show(Mod), 0;
        false ->
            case beamscale_args:parse(Spec, Argv) of
                {ok, Parsed} -> outcome(Mod, run(Mod, Parsed));
                {error, Reason} -> error_line(Mod, beamscale_error:format(Reason)), 2
            end
    end.

%% An unexpected crash is reported in one line with its reason; the stack goes to a file only
%% when asked for with BEAMSCALE_DEBUG.
run(Mod, Parsed) ->
    try Mod:do(Parsed)
    catch Class:Reason:Stack ->
        case os:getenv("BEAMSCALE_DEBUG") of
            false -> ok;
            _ -> io:format(standard_error, "~p~n", [{Class, Reason, Stack}])
        end,
        {crash, {Class, Reason}}
    end.

outcome(_Mod, ok) -> 0;
outcome(Mod, {failed, Text}) -> error_line(Mod, Text), 1;
outcome(Mod, {crash, Reason}) ->
    error_line(Mod, io_lib:format("internal error: ~0tp", [Reason], [{chars_limit, 500}])),
    1;
outcome(Mod, {error, Reason}) -> error_line(Mod, beamscale_error:format(Mod, Reason)), 2.

error_line(Mod, Text) ->
    #{name := Name} = Mod:info(),
    io:format(standard_error, "beamscale ~s: ~ts~n", [Name, Text]).
