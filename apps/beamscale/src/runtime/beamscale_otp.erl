%% @doc OTP releases beside the system's: their names (`27', `25-emu', `29-lcnt'), the Debian
%% suite whose source package carries each, where `beamscale otp install' puts them and which
%% are installed. An install is usable only once its `beamscale-otp.config' exists: the build
%% writes it last, in a staging directory renamed into place (beamscale_otp_build).
-module(beamscale_otp).

-export([releases/0, parse/1, name/1, root/0, dir/1, installs/0, erl/1, is_release_name/1]).
-export([erls/2, marker/0, format_error/1]).
-export_type([release/0, install/0]).

-type flavour() :: jit | emu | lcnt.
-type release() :: #{release := string(), flavour := flavour(), suite := string()}.
-type install() :: #{name := string(), dir := file:filename(), erl := file:filename(),
                     version := string(), seconds := non_neg_integer()}.

%% @doc The releases Debian's source archive carries, with the suite of each (oldest first).
-spec releases() -> [{string(), string()}].
releases() -> [{"25", "bookworm"}, {"27", "trixie"}, {"29", "sid"}].

%% @doc `RELEASE[-FLAVOUR]' read: a release of `releases/0', a flavour jit (default), emu or lcnt.
-spec parse(string()) -> {ok, release()} | {error, {?MODULE, term()}}.
parse(Text) ->
    case re:run(Text, "^([0-9]+)(?:-(jit|emu|lcnt))?$", [{capture, all_but_first, list}]) of
        {match, [Rel | Flavour]} ->
            case lists:keyfind(Rel, 1, releases()) of
                {Rel, Suite} ->
                    {ok, #{release => Rel, suite => Suite, flavour => flavour(Flavour)}};
                false -> {error, {?MODULE, {unknown_release, Text}}}
            end;
        nomatch -> {error, {?MODULE, {bad_name, Text}}}
    end.

flavour([]) -> jit;
flavour(["jit"]) -> jit;
flavour(["emu"]) -> emu;
flavour(["lcnt"]) -> lcnt.

%% @doc The install's name: `27' for the JIT, `27-emu', `27-lcnt'.
-spec name(release()) -> string().
name(#{release := R, flavour := jit}) -> R;
name(#{release := R, flavour := F}) -> R ++ "-" ++ atom_to_list(F).

%% @doc Whether `Text' names a release (`27', `25-emu') rather than a path to an erl.
-spec is_release_name(string()) -> boolean().
is_release_name(Text) -> re:run(Text, "^[0-9]+(-[a-z]+)?$") =/= nomatch.

%% @doc Where installs live: `$BEAMSCALE_OTP_DIR', else `~/.cache/beamscale/otp'.
-spec root() -> file:filename().
root() ->
    case os:getenv("BEAMSCALE_OTP_DIR") of
        Dir when is_list(Dir), Dir =/= "" -> filename:absname(Dir);
        _ -> filename:join(filename:basedir(user_cache, "beamscale"), "otp")
    end.

%% @doc The install directory of a release.
-spec dir(release()) -> file:filename().
dir(Release) -> filename:join(root(), name(Release)).

%% @doc The file an install is complete with.
-spec marker() -> string().
marker() -> "beamscale-otp.config".

%% @doc The complete installs under `root/0', by name (a staging directory, `NAME.partial',
%% has its marker before it is renamed: its name is no release's).
-spec installs() -> [install()].
installs() ->
    Dirs = filelib:wildcard(filename:join(root(), "*")),
    lists:sort([I || D <- Dirs, element(1, parse(filename:basename(D))) =:= ok,
                     {ok, I} <- [read_install(D)]]).

read_install(Dir) ->
    Erl = filename:join([Dir, "bin", "erl"]),
    case {file:consult(filename:join(Dir, marker())), filelib:is_regular(Erl)} of
        {{ok, Terms}, true} ->
            Info = maps:from_list([T || {_, _} = T <- Terms]),
            {ok, #{name => filename:basename(Dir), dir => Dir, erl => Erl,
                   version => maps:get(version, Info, "?"),
                   seconds => maps:get(seconds, Info, 0)}};
        _ -> error
    end.

%% @doc The erl of a release named `Text': its install, or this system's own erl when the
%% system's release is the one named with the JIT (the default flavour).
-spec erl(string()) -> {ok, file:filename()} | {error, {?MODULE, term()}}.
erl(Text) ->
    case parse(Text) of
        {ok, Release} -> find_erl(Release);
        Error -> Error
    end.

find_erl(Release) ->
    Name = name(Release),
    case [E || #{name := N, erl := E} <- installs(), N =:= Name] of
        [Erl] -> {ok, Erl};
        [] -> system_erl(Release)
    end.

system_erl(#{release := R, flavour := jit} = Release) ->
    case {erlang:system_info(otp_release), os:find_executable("erl")} of
        {R, Erl} when is_list(Erl) -> {ok, Erl};
        _ -> {error, {?MODULE, {not_installed, name(Release)}}}
    end;
system_erl(Release) ->
    {error, {?MODULE, {not_installed, name(Release)}}}.

%% @doc The `erls' of `--otp R1,R2 --emu-flavor F1,F2': every release in every flavour, named
%% by its install name (`27', `27-emu'). No releases: the system's. Names are checked before an
%% atom is made of them, so the atoms are among the few releases and flavours known.
-spec erls([string()], [string()]) -> {ok, [{atom(), string()}]} | {error, {?MODULE, term()}}.
erls([], Flavours) -> erls([erlang:system_info(otp_release)], Flavours);
erls(Releases, Flavours) ->
    Named = [case parse(with_flavour(R, F)) of
                 {ok, Release} -> {ok, name(Release)};
                 {error, _} -> {error, R, F}
             end || R <- Releases, F <- flavours(Flavours)],
    case [{R, F} || {error, R, F} <- Named] of
        [] -> {ok, [{list_to_atom(N), N} || {ok, N} <- Named]};
        [{R, F} | _] ->
            Bad = case parse(R) of
                      {ok, _} -> case lists:member($-, R) of true -> R ++ "-" ++ F; false -> F end;
                      {error, _} -> R
                  end,
            {error, {?MODULE, {unknown_release, Bad}}}
    end.

%% Without --emu-flavor a name keeps the flavour it says (`25-emu'); `jit' otherwise.
flavours([]) -> [none];
flavours(Flavours) -> Flavours.

with_flavour(R, none) -> R;
with_flavour(R, F) -> R ++ "-" ++ F.

%% @doc One line for this module's errors.
-spec format_error(term()) -> iodata().
format_error({unknown_release, Text}) ->
    ["unknown OTP release ", Text, ": expected one of ",
     lists:join(", ", [R || {R, _} <- releases()]), " (with -emu or -lcnt)"];
format_error({bad_name, Text}) ->
    ["not an OTP release: ", Text, " (expected RELEASE[-FLAVOUR], e.g. 27 or 25-emu)"];
format_error({not_installed, Name}) ->
    ["OTP ", Name, " is not installed: run `beamscale otp install ", Name, "'"].
