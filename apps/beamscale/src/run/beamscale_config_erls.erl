%% @doc A configuration's `erls' made real: each is a release by name (`27', `25-emu', an install
%% of `beamscale otp install', docs/otp.md), a path, or a command found on PATH, and must be an
%% executable file there.
-module(beamscale_config_erls).

-export([resolve/1]).

%% @doc The absolute `erl' of each alias, or the first that is not there.
-spec resolve([{atom(), string()}]) ->
    {ok, [{atom(), file:filename()}]} | {error, [term()], string()}.
resolve(Erls) ->
    try {ok, [{Alias, erl(Alias, Path)} || {Alias, Path} <- Erls]}
    catch throw:{missing, Alias, Message} -> {error, [erls, Alias], Message}
    end.

erl(Alias, Path) ->
    case beamscale_otp:is_release_name(Path) of
        true -> release_erl(Alias, Path);
        false -> path_erl(Alias, Path)
    end.

release_erl(Alias, Name) ->
    case beamscale_otp:erl(Name) of
        {ok, Erl} -> Erl;
        {error, Reason} ->
            throw({missing, Alias, unicode:characters_to_list(beamscale_error:format(Reason))})
    end.

path_erl(Alias, Path) ->
    Found = case lists:member($/, Path) of
                true -> Path;
                false -> os:find_executable(Path)
            end,
    case is_list(Found) andalso executable(Found) of
        true -> filename:absname(Found);
        false -> throw({missing, Alias, "no executable erl at " ++ Path})
    end.

executable(File) ->
    case file:read_file_info(File) of
        {ok, {file_info, _, regular, _, _, _, _, Mode, _, _, _, _, _, _}} -> Mode band 8#111 =/= 0;
        _ -> false
    end.
