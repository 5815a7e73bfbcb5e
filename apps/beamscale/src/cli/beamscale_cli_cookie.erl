%% @doc The cookie of existing target nodes for `load' and `saturate', kept off the command line
%% (every local user reads it there with `ps'): `--cookie-file F' (a file only its owner reads,
%% as `~/.erlang.cookie'), else `BEAMSCALE_COOKIE', else `--cookie C' (kept for scripts, with a
%% warning), else none (the scenario's, then `~/.erlang.cookie').
-module(beamscale_cli_cookie).

-export([options/0, exec/2, format_error/1]).

-define(ENV, "BEAMSCALE_COOKIE").
%% A cookie is a line: the emulator's own are 20 letters.
-define(MAX_BYTES, 4096).

%% @doc The command-line options, for a command's `info/0'.
-spec options() -> beamscale_args:spec().
options() ->
    [{cookie_file, "--cookie-file", string,
      "file holding the cookie of existing target nodes, mode 0600 or 0400",
      {text, "$" ?ENV ", else the scenario's, else ~/.erlang.cookie"}},
     {cookie, "--cookie", string, "the cookie itself: every local user sees it in ps (a "
                                  "warning says so); prefer --cookie-file or $" ?ENV}].

%% @doc `Exec' with the cookie the options or the environment give, if any.
-spec exec(map(), map()) -> {ok, map()} | {error, {?MODULE, term()}}.
exec(#{cookie_file := File}, Exec) ->
    case read(File) of
        {ok, C} -> {ok, Exec#{cookie => C}};
        {error, Why} -> {error, {?MODULE, {File, Why}}}
    end;
exec(Opts, Exec) ->
    case {os:getenv(?ENV), Opts} of
        {C, _} when is_list(C), C =/= "" -> {ok, Exec#{cookie => list_to_atom(C)}};
        {_, #{cookie := C}} ->
            io:put_chars(standard_error,
                         ["beamscale: warning: --cookie shows the cookie to every local user "
                          "(ps); use --cookie-file FILE or ", ?ENV, "\n"]),
            {ok, Exec#{cookie => list_to_atom(C)}};
        _ -> {ok, Exec}
    end.

%% The file must be private, as the emulator requires of ~/.erlang.cookie.
read(File) ->
    case beamscale_format_file:read(File, ?MAX_BYTES) of
        {ok, Bin} ->
            {ok, Info} = file:read_file_info(File),
            Mode = element(8, Info) band 8#777,
            case {Mode band 8#077, string:trim(unicode:characters_to_list(Bin))} of
                {0, ""} -> {error, empty};
                {0, C} when is_list(C) -> {ok, list_to_atom(C)};
                {0, _} -> {error, not_text};
                _ -> {error, {mode, Mode}}
            end;
        {error, Why} -> {error, beamscale_format_file:format_error(Why)}
    end.

%% @doc One line for an error.
-spec format_error(term()) -> iodata().
format_error({File, {mode, Mode}}) ->
    io_lib:format("--cookie-file ~ts: other users may read it (mode ~.8b): chmod 600 it",
                  [File, Mode]);
format_error({File, empty}) -> io_lib:format("--cookie-file ~ts: empty", [File]);
format_error({File, not_text}) -> io_lib:format("--cookie-file ~ts: not UTF-8 text", [File]);
format_error({File, Msg}) -> io_lib:format("--cookie-file ~ts: ~ts", [File, Msg]).
