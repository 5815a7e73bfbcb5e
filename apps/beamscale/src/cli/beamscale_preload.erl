%% @doc Loads every module of the escript's archive in one pass when the command starts.
%%
%% Left to the code server, a module is looked up in each of the archive's application
%% directories in turn, and every look into the archive costs the loader a dozen file system
%% calls (a `readlink' per path component, the archive's `stat' and its time converted to local
%% time); OTP's own modules are looked for in the archive first too. Loading the archive's 249
%% modules at once takes about 0.2 s of CPU, about what the lookups of the 160 that a load run
%% uses cost: a 1000-user XMPP load without chats (the session of `bench/xmpp_vs_tsung.sh') makes
%% 6871 `readlink' calls instead of 12 466, `beamscale list' 2793 instead of 4065. The
%% archive's directories stay first in the code path: moved last, a one-user load made as many
%% `readlink' calls (2918 against 2634), as the loader resolves every directory it tries, OTP's
%% as well, a component at a time.
-module(beamscale_preload).

-export([escript/0, archive/1]).

%% @doc Preload the running escript's modules; nothing when not run as an escript or when the
%% archive cannot be read (the code server then loads lazily, as before).
-spec escript() -> ok.
escript() ->
    case script() of
        {ok, Script} -> archive(Script);
        none -> ok
    end.

%% @doc Preload the modules of escript `Script''s archive that are not loaded yet.
-spec archive(file:filename()) -> ok.
archive(Script0) ->
    Script = filename:absname(Script0),
    case escript:extract(Script, []) of
        {ok, Sections} ->
            case lists:keyfind(archive, 1, Sections) of
                {archive, Bin} -> load(Script, Bin);
                _ -> ok
            end;
        {error, _} -> ok
    end.

script() ->
    try {ok, escript:script_name()}
    catch error:_ -> none
    end.

load(Script, Bin) ->
    Collect = fun(Name, _Info, Get, Acc) ->
                      case filename:extension(Name) of
                          ".beam" -> module(Script, Name, Get, Acc);
                          _ -> Acc
                      end
              end,
    case zip:foldl(Collect, [], {Script, Bin}) of
        {ok, Mods} -> load(Mods);
        {error, _} -> ok
    end.

%% A module that does not load at once (one with an `on_load' function) is left to the code
%% server, as before; the others are loaded without it.
load(Mods) ->
    case code:atomic_load(Mods) of
        ok -> ok;
        {error, Bad} ->
            _ = code:atomic_load([M || {Mod, _, _} = M <- Mods, not lists:keymember(Mod, 1, Bad)]),
            ok
    end.

%% The running modules (this one, the command's entry) are not loaded again: loading would make
%% their running code old, and a later load would kill the process running it.
module(Script, Name, Get, Acc) ->
    Mod = list_to_atom(filename:basename(Name, ".beam")),
    case erlang:module_loaded(Mod) of
        true -> Acc;
        false -> [{Mod, filename:join(Script, Name), Get()} | Acc]
    end.
