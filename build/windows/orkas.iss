; Inno Setup script for the Windows installer: per-user install (no administrator rights), a Start-menu
; entry, an optional desktop shortcut and an uninstaller. build/build.py passes Version, Source (the
; PyInstaller folder), Output and Root. The data folder (%LOCALAPPDATA%\Orkas) is not under {app}: an
; uninstall or upgrade leaves it alone.
#ifndef Version
  #define Version "0.0.0"
#endif

[Setup]
AppId={{6C2B8F0E-9D1A-4C5E-8B7A-0A4F1E2D3C4B}
AppName=Orkas
AppVersion={#Version}
AppPublisher=Orkas developers
DefaultDirName={localappdata}\Programs\Orkas
DefaultGroupName=Orkas
PrivilegesRequired=lowest
OutputDir={#Output}
OutputBaseFilename=Orkas-{#Version}-windows-setup
SetupIconFile={#Root}\icons\orkas.ico
UninstallDisplayIcon={app}\orkas.exe
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible

[Tasks]
Name: "desktopicon"; Description: "Create a desktop shortcut"; GroupDescription: "Shortcuts:"; Flags: unchecked

[Files]
Source: "{#Source}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{group}\Orkas"; Filename: "{app}\orkas.exe"
Name: "{group}\Uninstall Orkas"; Filename: "{uninstallexe}"
Name: "{autodesktop}\Orkas"; Filename: "{app}\orkas.exe"; Tasks: desktopicon

[Run]
Filename: "{app}\orkas.exe"; Description: "Open Orkas"; Flags: nowait postinstall skipifsilent
