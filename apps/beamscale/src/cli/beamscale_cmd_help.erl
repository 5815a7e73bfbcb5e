%% @doc `beamscale help [COMMAND]': the list of commands, or one command's usage and options.
-module(beamscale_cmd_help).
-behaviour(beamscale_cmd).

-export([info/0, do/1, format_error/1, show/1]).

%% @doc This command's name, summary and options.
-spec info() -> beamscale_cmd:info().
info() ->
    #{name => "help", summary => "show the commands, or how to use one",
      usage => "beamscale help [COMMAND]", options => []}.

%% @doc Print the overview or one command's help.
-spec do(beamscale_args:parsed()) -> beamscale_cmd:outcome().
do(#{args := []}) ->
    io:format("beamscale: a scalability lab for the BEAM~n~nUsage: beamscale COMMAND [OPTIONS]"
              "~n~nCommands:~n"),
    [io:format("  ~-10s ~s~n", [N, S])
     || M <- beamscale_cmd:commands(), #{name := N, summary := S} <- [M:info()]],
    io:format("~nbeamscale COMMAND --help tells more. Exit codes: 0 ok, 1 a benchmark or check "
              "failed, 2 bad usage or bad input.~n"),
    ok;
do(#{args := [Name | _]}) ->
    case beamscale_cmd:find(Name) of
        {ok, Mod} -> show(Mod);
        error -> {error, {unknown_command, Name}}
    end.

%% @doc Print one command's usage and options.
-spec show(module()) -> ok.
show(Mod) ->
    #{usage := Usage, summary := Summary, options := Spec} = Info = Mod:info(),
    io:format("Usage: ~s~n~n~s~n", [Usage, Summary]),
    case maps:find(details, Info) of
        {ok, Details} -> io:format("~n~s~n", [Details]);
        error -> ok
    end,
    Spec =/= [] andalso io:format("~nOptions:~n~s", [beamscale_args:usage(Spec)]),
    ok.

%% @doc One line for this command's errors.
-spec format_error(term()) -> iodata().
format_error({unknown_command, Name}) -> ["unknown command ", Name].
