%% @doc The crash file: an internal error (a bug of beamscale, not bad input) is told in one
%% line naming `beamscale-crash.log', which holds what a bug report needs: the command line,
%% the error and its stack, the OTP release. As rebar3 writes `rebar3.crashdump': in the run's
%% directory when the command names one that exists, else in the current directory.
-module(beamscale_crash).

-export([write/3, dir/1, file_name/0]).


%% @doc The crash file's name.
-spec file_name() -> string().
file_name() -> beamscale_format_rundir:name(crash).

%% @doc Where the crash file of a command with these options goes: `OUT/NAME' when both are
%% given and it is a directory, else the current directory.
-spec dir(#{atom() => term()}) -> file:filename().
dir(#{out := Out, name := Name}) when is_list(Out), is_list(Name) ->
    Dir = filename:join(Out, Name),
    case filelib:is_dir(Dir) of
        true -> Dir;
        false -> "."
    end;
dir(_Opts) -> ".".

%% @doc Write the crash file in `Dir' (replacing an older one): `{ok, File}', or `{error,
%% Reason}' when it cannot be written (the one line then says so instead).
-spec write(file:filename(), [string()], {atom(), term(), list()}) ->
    {ok, file:filename()} | {error, file:posix() | badarg | terminated | system_limit}.
write(Dir, Argv, {Class, Reason, Stack}) ->
    File = beamscale_format_rundir:path(Dir, crash),
    Text = io_lib:format("beamscale internal error, ~ts~n~ncommand: beamscale ~ts~n"
                         "OTP: ~s (erts ~s)~n~n~p:~P~n~nstack:~n~p~n",
                         [calendar:system_time_to_rfc3339(erlang:system_time(second)),
                          lists:join(" ", [quote(A) || A <- Argv]),
                          erlang:system_info(otp_release), erlang:system_info(version),
                          Class, Reason, 200, Stack]),
    case file:write_file(File, unicode:characters_to_binary(Text)) of
        ok -> {ok, File};
        {error, _} = Error -> Error
    end.

quote(Arg) ->
    case lists:any(fun(C) -> lists:member(C, " '\"\\$`") end, Arg) of
        true -> [$', string:replace(Arg, "'", "'\\''", all), $'];
        false -> Arg
    end.
