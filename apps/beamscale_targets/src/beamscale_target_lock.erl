%% @doc A directory held by one emulator at a time: a lock file, made exclusively, that holds the
%% holder's OS pid and a description of it ("node N (OS pid P)"). A lock whose emulator is gone
%% (or whose file is unreadable or has no pid) is stale and taken over, once; a lock of this
%% emulator is its own. Mnesia's directory uses it (Mnesia locks nothing), and so do the run
%% directories of the command (two runs appending to one directory would measure every iteration
%% twice).
-module(beamscale_target_lock).

-export([take/2, release/1]).

%% @doc Hold `File' for this emulator, described as `Holder'. `{in_use, Description}' when a
%% live emulator holds it.
-spec take(file:filename(), iodata()) ->
          ok | {in_use, string()} | {error, file:posix() | badarg | system_limit}.
take(File, Holder) -> take(File, Holder, 2).

take(File, Holder, Tries) ->
    case file:open(File, [write, exclusive]) of
        {ok, Fd} ->
            try file:write(Fd, [os:getpid(), " ", Holder])
            after file:close(Fd)
            end;
        {error, eexist} ->
            {Pid, Description} = case file:read_file(File) of
                                     {ok, Text} -> holder(string:split(Text, " "));
                                     {error, _} -> {"", ""}
                                 end,
            case Pid =:= os:getpid() orelse not beam(Pid) of
                true when Tries > 1 -> _ = file:delete(File), take(File, Holder, Tries - 1);
                _ -> {in_use, Description}
            end;
        {error, _} = Error -> Error
    end.

%% @doc Let go of `File' (a lock of this emulator; one already gone is fine).
-spec release(file:filename()) -> ok.
release(File) ->
    _ = file:delete(File),
    ok.

holder([Pid, Description]) ->
    {binary_to_list(Pid), unicode:characters_to_list(Description)};
holder(_) -> {"", ""}.

%% Whether an OS process is a live Erlang emulator (not one gone or a zombie, nor another
%% process that took its pid). /proc/PID/stat: `PID (COMM) STATE ...'.
beam(Pid) ->
    case file:read_file(["/proc/", Pid, "/stat"]) of
        {ok, Stat} ->
            case string:split(Stat, ") ") of
                [Head, <<State, _/binary>>] ->
                    State =/= $Z andalso string:find(Head, " (beam") =/= nomatch;
                _ -> false
            end;
        _ -> false
    end.
